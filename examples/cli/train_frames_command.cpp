// dfmpc train-frames: train the frame tokenizer of video world models (a
// convolutional autoencoder) on the frames of datasets collected with
// `dfmpc collect --frames WxH`, holding out the last episodes' frames as
// `dfmpc train` does.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dataset_tokens.h"
#include "device_flag.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/envs/image_io.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "optimizer_flags.h"
#include "output_path.h"
#include "plot/plot.h"
#include "progress_bar.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

constexpr int kShownFrames = 8;  // columns of the reconstructions image
constexpr int kZoom = 2;         // its upscaling

struct TrainFramesCommandOptions {
  std::vector<std::string> data;
  std::string out;
  double validation_fraction = 0.1;
  int threads = 1;
  std::string device = "cpu";
  worldmodel::FrameTokenizerConfig model;
  worldmodel::FrameTrainOptions trainer;
  std::string command_line;
};

// The frames of one or more datasets, split by episode.
struct FrameData {
  envs::DatasetInfo info;        // the first dataset's
  at::Tensor train, validation;  // uint8 [N, H, W, 3]
};

// Each dataset is split as SplitEpisodes does, so validation holds the last
// episodes of every dataset.
FrameData LoadFrames(const std::vector<std::string>& paths, double validation_fraction) {
  if (paths.empty()) throw std::invalid_argument("--data: no dataset given");
  FrameData data;
  std::vector<at::Tensor> train, validation;
  for (const std::string& path : paths) {
    envs::Dataset dataset = envs::ReadDataset(path, /*load_frames=*/true);
    const envs::DatasetInfo& info = dataset.info;
    if (info.frame_width == 0) {
      throw std::invalid_argument("dataset " + path +
                                  " has no frames: collect it with `dfmpc collect --frames 64x64`");
    }
    if (path == paths.front()) {
      data.info = info;
    } else if (info.task != data.info.task || info.frame_width != data.info.frame_width ||
               info.frame_height != data.info.frame_height) {
      auto describe = [](const envs::DatasetInfo& i) {
        return i.task + ", " + std::to_string(i.frame_width) + "x" +
               std::to_string(i.frame_height) + " frames";
      };
      throw std::invalid_argument("--data: " + path + " (" + describe(info) + ") does not match " +
                                  paths.front() + " (" + describe(data.info) + ")");
    }
    // Views of the dataset's bytes, copied by the concatenations below.
    const at::Tensor all =
        at::from_blob(dataset.frames.data(),
                      {dataset.num_steps(), info.frame_height, info.frame_width, 3}, at::kByte);
    std::vector<at::Tensor> episodes;
    for (int e = 0; e < dataset.num_episodes(); ++e) {
      episodes.push_back(all.narrow(0, dataset.episode_starts[e], dataset.episode_lengths[e]));
    }
    pipelines::EpisodeSplit split =
        pipelines::SplitEpisodes(std::move(episodes), validation_fraction, path);
    train.push_back(at::cat(split.train));
    validation.push_back(at::cat(split.validation));
  }
  data.train = at::cat(train);
  data.validation = at::cat(validation);
  return data;
}

void WriteLossCsv(const std::string& path, const std::vector<worldmodel::FrameTrainLogRow>& log) {
  Table table({"step", "train_loss", "validation_loss", "validation_psnr_db", "frames_per_second"});
  for (const auto& row : log) {
    table.AddRow({std::to_string(row.step), FormatFixed(row.train_loss, 6),
                  FormatFixed(row.validation_loss, 6), FormatFixed(row.validation_psnr, 3),
                  FormatFixed(row.frames_per_second, 1)});
  }
  table.WriteCsv(path);
}

void WriteLossPlot(const std::string& path, const std::vector<worldmodel::FrameTrainLogRow>& log) {
  plot::Series train{"train", {}, {}}, validation{"validation", {}, {}};
  for (const auto& row : log) {
    train.x.push_back(row.step);
    train.y.push_back(row.train_loss);
    validation.x.push_back(row.step);
    validation.y.push_back(row.validation_loss);
  }
  plot::WritePlotPng(
      path,
      {{"Frame tokenizer training loss", "step", "loss (pixel MSE)", true, {train, validation}}});
}

// Up to kShownFrames frames spread over `frames`, originals in the top row
// and their reconstructions below, upscaled kZoom times.
void WriteReconstructions(const std::string& path, worldmodel::FrameAutoencoderImpl& model,
                          const at::Tensor& frames) {
  const int64_t shown = std::min<int64_t>(kShownFrames, frames.size(0));
  const at::Tensor picks =
      at::linspace(0, static_cast<double>(frames.size(0) - 1), shown).round().to(at::kLong);
  const at::Tensor originals = frames.index_select(0, picks);
  at::NoGradGuard no_grad;
  const at::Tensor rows = at::stack({originals, model.DecodeToBytes(model.Encode(originals))});
  // [2, shown, H, W, 3] -> [2 * H, shown * W, 3], each pixel kZoom x kZoom.
  const at::Tensor image = rows.repeat_interleave(kZoom, 2)
                               .repeat_interleave(kZoom, 3)
                               .permute({0, 2, 1, 3, 4})
                               .reshape({2 * frames.size(1) * kZoom, -1, 3})
                               .contiguous();
  envs::WritePng(path,
                 std::vector<std::uint8_t>(image.data_ptr<std::uint8_t>(),
                                           image.data_ptr<std::uint8_t>() + image.numel()),
                 static_cast<int>(image.size(1)), static_cast<int>(image.size(0)));
}

void RunTrainFrames(TrainFramesCommandOptions o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  at::set_num_threads(o.threads);
  o.trainer.Validate();
  const c10::Device device = worldmodel::ParseDevice(o.device);

  const FrameData data = LoadFrames(o.data, o.validation_fraction);
  worldmodel::FrameTokenizerInfo info;
  info.task = data.info.task;
  info.config = o.model;
  info.config.width = data.info.frame_width;
  info.config.height = data.info.frame_height;
  info.notes = o.command_line;
  worldmodel::FrameAutoencoder model(info.config, o.trainer.seed);
  model->to(device);  // it trains where it is
  std::fprintf(stderr,
               "train-frames: %s, %lld training and %lld validation frames of %dx%d, latent %d\n",
               info.task.c_str(), static_cast<long long>(data.train.size(0)),
               static_cast<long long>(data.validation.size(0)), info.config.width,
               info.config.height, info.config.latent_dim);

  const std::string stem = std::filesystem::path(o.out).replace_extension().string();
  ProgressBar bar("train-frames", o.trainer.steps);
  auto on_progress = [&](int step, double loss) {
    char note[96];
    std::snprintf(note, sizeof note, "loss %.5f, %.0f frames/s", loss,
                  bar.Rate(step) * o.trainer.batch_size);
    bar.Update(step, note);
  };
  auto on_log = [&](const std::vector<worldmodel::FrameTrainLogRow>& log) {
    WriteLossCsv(stem + "_loss.csv", log);
    WriteLossPlot(stem + "_loss.png", log);
    worldmodel::SaveFrameTokenizer(o.out, info, *model);
  };
  const auto log = worldmodel::TrainFrameAutoencoder(*model, data.train, data.validation, o.trainer,
                                                     on_progress, on_log);
  char note[96];
  std::snprintf(note, sizeof note, "validation loss %.5f", log.back().validation_loss);
  bar.Finish(note);
  WriteReconstructions(stem + "_reconstructions.png", *model, data.validation);
  // The mean training frame on every held-out frame: what a tokenizer that
  // ignored the moving parts would score.
  const at::Tensor mean_frame =
      worldmodel::PixelsToFrames(worldmodel::MeanFramePixels(data.train)
                                     .unsqueeze(0)
                                     .expand({data.validation.size(0), -1, -1, -1}));
  std::printf("held-out PSNR %.2f dB over %lld frames (the mean training frame: %.2f dB)\n",
              log.back().validation_psnr, static_cast<long long>(data.validation.size(0)),
              worldmodel::FramePsnr(mean_frame, data.validation));
  std::fprintf(stderr, "wrote %s, %s_loss.csv, %s_loss.png, %s_reconstructions.png\n",
               o.out.c_str(), stem.c_str(), stem.c_str(), stem.c_str());
}

}  // namespace

void AddTrainFramesCommand(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<TrainFramesCommandOptions>();
  o->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "train-frames", "Train the frame tokenizer of video world models on a dataset's frames");
  cmd->add_option("--data", o->data,
                  "HDF5 dataset(s) from `dfmpc collect --frames WxH`, of one task and frame size")
      ->required();
  cmd->add_option("--out", o->out, "tokenizer file to write (side files share its stem)")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--latent", o->model.latent_dim, "latent features per frame")
      ->capture_default_str();
  cmd->add_option("--channels", o->model.channels,
                  "channels of the first convolution (then 2x, 4x, 4x)")
      ->capture_default_str();
  AddOptimizerFlags(*cmd, o->trainer, "frames", "weights and batches");
  cmd->add_option("--foreground-weight", o->trainer.foreground_weight,
                  "extra loss weight of pixels that differ from the mean frame (the moving parts)")
      ->capture_default_str();
  cmd->add_option("--validate-every", o->trainer.validate_every,
                  "steps between validations (and model/plot writes)")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", o->validation_fraction,
                  "fraction of episodes held out (the last ones), as in `dfmpc train`")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  AddDeviceFlag(*cmd, o->device);
  cmd->callback([o] { RunTrainFrames(*o); });
}

}  // namespace dfmpc::cli
