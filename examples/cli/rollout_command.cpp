// dfmpc rollout: open-loop video prediction with a video world model. From
// S real frames of an episode, the model generates the next H frames on the
// episode's actions, chunk by chunk with a bounded history, and the command
// writes the side-by-side video, a strip, and PSNR / SSIM against the
// horizon for the model and its baselines (copying the last context frame,
// the latent MLP when given, and the tokenizer's reconstruction of the truth,
// the ceiling).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/image_io.h"
#include "dfmpc/envs/video_io.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/video_model.h"
#include "latent_manifold.h"
#include "progress_bar.h"
#include "resident_memory.h"
#include "rollout_outputs.h"
#include "rollout_truth.h"
#include "table.h"
#include "task_option.h"
#include "video_rollout.h"

namespace dfmpc::cli {
namespace {

struct RolloutCommandOptions {
  std::string model;
  std::string task = "pendulum_swingup";
  std::string actions = "mixed";
  std::string mlp;
  std::string manifold_data;
  std::uint64_t seed = 0;
  int episodes = 1;
  int context = 16;
  int horizon = 64;
  std::string cache = "exact";
  worldmodel::RolloutOptions rollout;
  std::string out = "out/rollout";
  int fps = 25;
  int scale = 2;
  int strip_every = 0;  // 0: horizon / 8
  int threads = 1;
  std::string device = "cpu";
};

std::string Mib(int64_t bytes) { return FormatFixed(bytes / 1048576.0, 2) + " MiB"; }

void Validate(const RolloutCommandOptions& o) {
  if (o.horizon < 1)
    throw std::invalid_argument("--horizon must be >= 1, got " + std::to_string(o.horizon));
  if (o.context < 1)
    throw std::invalid_argument("--context must be >= 1, got " + std::to_string(o.context));
  if (o.episodes < 1) throw std::invalid_argument("--episodes must be >= 1");
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  if (o.fps < 1 || o.fps > 100) throw std::invalid_argument("--fps must be in [1, 100]");
  if (o.scale < 1 || o.scale > 8) throw std::invalid_argument("--scale must be in [1, 8]");
  if (o.strip_every < 0) throw std::invalid_argument("--strip-every must be >= 0");
}

// The prediction table: PSNR / SSIM per method at the usual horizons.
void PrintSummary(const HorizonMetrics& metrics, int horizon) {
  std::vector<int> steps;
  for (int h : {1, 4, 16, 64, 256, 1000}) {
    if (h <= horizon) steps.push_back(h);
  }
  if (steps.empty() || steps.back() != horizon) steps.push_back(horizon);
  std::vector<std::string> header{"method"};
  for (int h : steps) header.push_back("h=" + std::to_string(h) + " PSNR / SSIM");
  Table table(header);
  for (std::size_t m = 0; m < metrics.methods().size(); ++m) {
    std::vector<std::string> row{metrics.methods()[m]};
    for (int h : steps) {
      row.push_back(FormatFixed(metrics.Psnr(static_cast<int>(m), h), 2) + " / " +
                    FormatFixed(metrics.Ssim(static_cast<int>(m), h), 3));
    }
    table.AddRow(row);
  }
  std::printf("mean over %d episode(s):\n", metrics.episodes());
  table.Print(std::cout);
}

void RunRollout(RolloutCommandOptions o) {
  Validate(o);
  at::set_num_threads(o.threads);
  if (o.model.empty()) o.model = pipelines::ShippedVideoModelPath(o.task);
  worldmodel::VideoModel model =
      worldmodel::LoadVideoModel(o.model, {o.task, 0}, worldmodel::ParseDevice(o.device));
  o.rollout.num_levels = worldmodel::SamplingLevels(model.world.info, o.rollout.num_levels);
  const worldmodel::FrameTokenizerConfig& frames = model.tokenizer.info.config;
  std::optional<worldmodel::MlpCheckpoint> mlp;
  if (!o.mlp.empty()) mlp = worldmodel::LoadMlpCheckpoint(o.mlp, {o.task, 0});
  o.rollout.cache_mode = worldmodel::ParseCacheMode(o.cache);
  std::optional<LatentManifold> manifold;
  if (!o.manifold_data.empty()) manifold.emplace(o.manifold_data, model);

  std::vector<std::string> methods{"model"};
  if (mlp) methods.push_back("latent-mlp");
  methods.push_back("copy-last");
  methods.push_back("ceiling");
  HorizonMetrics metrics(methods, o.horizon);
  std::filesystem::create_directories(o.out);

  pipelines::TruthRequest request;
  request.task = o.task;
  request.action_repeat = model.world.info.action_repeat;
  request.width = frames.width;
  request.height = frames.height;
  request.length = o.context + o.horizon;
  request.actions = o.actions;
  ProgressBar bar("rollout", static_cast<long long>(o.episodes) * o.horizon, "frames");
  double model_seconds = 0.0;
  pipelines::ModelPrediction first;
  at::Tensor first_truth;
  for (int e = 0; e < o.episodes; ++e) {
    request.seed = o.seed + static_cast<std::uint64_t>(e);
    const pipelines::TruthTrajectory truth = pipelines::MakeTruth(request);
    const at::Tensor truth_frames =
        pipelines::StackFrames(truth.frames, frames.width, frames.height);
    const pipelines::RealTrajectory real =
        pipelines::EncodeTrajectory(model, truth_frames, truth.actions);
    pipelines::ModelPrediction prediction =
        pipelines::PredictWithDiffusion(model, real, o.context, o.rollout, [&](int64_t done) {
          bar.Update(static_cast<long long>(e) * o.horizon + done,
                     "episode " + std::to_string(e + 1) + "/" + std::to_string(o.episodes));
        });
    model_seconds += prediction.seconds;
    const at::Tensor future = truth_frames.narrow(0, o.context, o.horizon);
    std::vector<MethodFrames> predictions{{"model", prediction.frames}};
    if (mlp)
      predictions.push_back(
          {"latent-mlp", pipelines::PredictWithMlp(*mlp, model, real, o.context).frames});
    predictions.push_back(
        {"copy-last", truth_frames[o.context - 1].unsqueeze(0).expand_as(future).contiguous()});
    predictions.push_back(
        {"ceiling", pipelines::DecodeLatents(model, real.latents.narrow(0, o.context, o.horizon))});
    metrics.Add(predictions, future);
    if (manifold) manifold->Add(prediction.latents, real.latents.narrow(0, o.context, o.horizon));
    if (e == 0) {
      first = std::move(prediction);
      first_truth = future;
    }
  }
  bar.Finish();

  const std::string stem = o.out + "/rollout";
  metrics.WriteCsv(stem + "_metrics.csv");
  metrics.WritePlot(stem + "_metrics.png", o.task);
  int width = 0, height = 0;
  const auto video = SideBySideFrames(first_truth, first.frames, o.scale, &width, &height);
  envs::WriteGif(stem + ".gif", video, width, height, std::max(1, 100 / o.fps));
  envs::WriteMp4(stem + ".mp4", video, width, height, o.fps);
  const int every = o.strip_every > 0 ? o.strip_every : std::max(1, o.horizon / 8);
  WriteStrip(stem + "_strip.png", first_truth, first.frames, every, o.scale);
  if (manifold) manifold->Write(stem + "_manifold.csv", stem + "_manifold.png", o.task);

  PrintSummary(metrics, o.horizon);
  if (manifold) manifold->PrintSummary(std::cout);
  std::printf(
      "model: %.1f frames/s (generation and decoding, %d thread(s), cache %s, chunk %d, "
      "K %d)\n",
      o.episodes * o.horizon / model_seconds, o.threads, o.cache.c_str(), o.rollout.chunk,
      o.rollout.num_levels);
  const std::size_t last = first.state_bytes.size() - 1;
  std::size_t at_100 = 0;
  while (at_100 < last && first.generated[at_100] < 100) ++at_100;
  std::printf(
      "rollout state: %s with %d history tokens after %lld frames, %s with %d after %lld; "
      "process resident %s\n",
      Mib(first.state_bytes[at_100]).c_str(), first.history_tokens[at_100],
      static_cast<long long>(first.generated[at_100]), Mib(first.state_bytes[last]).c_str(),
      first.history_tokens[last], static_cast<long long>(first.generated[last]),
      Mib(std::max<int64_t>(0, ResidentKib()) * 1024).c_str());
  std::printf("wrote %s.gif, %s.mp4, %s_strip.png, %s_metrics.csv, %s_metrics.png%s\n",
              stem.c_str(), stem.c_str(), stem.c_str(), stem.c_str(), stem.c_str(),
              manifold ? (", " + stem + "_manifold.csv, " + stem + "_manifold.png").c_str() : "");
}

}  // namespace

void AddRolloutCommand(CLI::App& app) {
  auto o = std::make_shared<RolloutCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "rollout",
      "Open-loop video prediction: a video model generates the frames after a real "
      "context on the real actions; writes a side-by-side GIF/MP4, a strip and PSNR/SSIM");
  cmd->add_option("--model", o->model,
                  "video model from `dfmpc train --tokenizer` (default: the task's shipped "
                  "TASK_video.pt)");
  cmd->add_option("--task", o->task, "task of the episodes (the model's)")
      ->check(TaskNameOrFolder())
      ->capture_default_str();
  cmd->add_option("--actions", o->actions, "action source: " + pipelines::ActionSourceHelp())
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the first episode (and its policy)")
      ->capture_default_str();
  cmd->add_option(
         "--episodes", o->episodes,
         "episodes (seeds SEED, SEED+1, ...): metrics are their mean; videos show the first")
      ->capture_default_str();
  cmd->add_option("--context", o->context, "real frames S the model sees")->capture_default_str();
  cmd->add_option("--horizon", o->horizon, "frames H generated open-loop")->capture_default_str();
  cmd->add_option("--chunk", o->rollout.chunk, "frames generated together (one pyramid)")
      ->capture_default_str();
  o->rollout.num_levels = 0;
  cmd->add_option("--levels", o->rollout.num_levels, "sampling levels K (0: the model's, a distilled model's K, else 16)")
      ->capture_default_str();
  cmd->add_option("--uncertainty", o->rollout.uncertainty, "pyramid u")->capture_default_str();
  cmd->add_option("--cache", o->cache, "exact (KV cache) or none (reference: recompute)")
      ->check(CLI::IsMember({"exact", "none"}))
      ->capture_default_str();
  cmd->add_option("--history", o->rollout.history,
                  "history tokens kept, sinks included (0: what the model's window leaves beside "
                  "a chunk)")
      ->capture_default_str();
  cmd->add_option("--sinks", o->rollout.num_sinks, "attention sinks: first tokens kept for good")
      ->capture_default_str();
  cmd->add_option("--rollout-seed", o->rollout.seed, "seed of the model's sampling noise")
      ->capture_default_str();
  cmd->add_option("--mlp", o->mlp,
                  "latent MLP baseline from `dfmpc train-mlp --tokenizer` (optional)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--manifold-data", o->manifold_data,
                  "dataset with frames (e.g. the training data): distance of each generated "
                  "latent to its nearest real latent, beside the same for the real frames")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", o->out,
                  "directory for rollout.gif, rollout.mp4, rollout_strip.png, rollout_metrics.csv "
                  "and .png")
      ->capture_default_str();
  cmd->add_option("--fps", o->fps, "frames per second of the GIF and MP4")->capture_default_str();
  cmd->add_option("--scale", o->scale, "pixel upscale of the video panels")->capture_default_str();
  cmd->add_option("--strip-every", o->strip_every, "strip shows every k-th frame (0: H / 8)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  AddDeviceFlag(*cmd, o->device);
  cmd->add_flag("--no-cuda-graphs{false}", o->rollout.cuda_graphs,
                "on a GPU, run every model call eagerly instead of replaying CUDA graphs");
  cmd->callback([o] { RunRollout(*o); });
}

}  // namespace dfmpc::cli
