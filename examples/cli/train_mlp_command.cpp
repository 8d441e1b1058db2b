// dfmpc train-mlp: train the one-step MLP dynamics baseline on a dataset,
// with the same train / validation episode split as `dfmpc train`; with
// --ensemble E, E of them from seeds seed .. seed + E - 1 in one ensemble
// file (the model of `--policy mlp-mppi`).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dataset_tokens.h"
#include "device_flag.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "output_path.h"
#include "progress_bar.h"

namespace dfmpc::cli {
namespace {

struct TrainMlpCommandOptions {
  std::vector<std::string> data;
  std::string out;
  std::string tokenizer;  // train on the latents of the frames
  double validation_fraction = 0.1;
  int threads = 1;
  std::string device = "cpu";
  int ensemble = 0;  // 0: one MLP in a single-model file
  worldmodel::MlpTrainOptions trainer;
  std::string command_line;
};

void RunTrainMlp(const TrainMlpCommandOptions& o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  if (o.ensemble < 0) {
    throw std::invalid_argument("--ensemble must be >= 0, not " + std::to_string(o.ensemble));
  }
  at::set_num_threads(o.threads);
  o.trainer.Validate();
  const c10::Device device = worldmodel::ParseDevice(o.device);

  // The MLP predicts the observation change itself.
  worldmodel::FrameTokenizerCheckpoint tokenizer;
  if (!o.tokenizer.empty()) tokenizer = worldmodel::LoadFrameTokenizer(o.tokenizer);
  training::TrainingData data =
      training::LoadTrainingData(o.data, /*observation_deltas=*/false, o.validation_fraction,
                                 tokenizer.model ? tokenizer.model.get() : nullptr);
  worldmodel::MlpModelInfo info;
  info.task = data.info.task;
  info.config.layout = data.layout;
  training::EpisodeSplit& split = data.split;
  const worldmodel::Normalizer normalizer = training::FitAndNormalize(split);

  info.notes = o.command_line;
  std::fprintf(stderr, "train-mlp: %s, %zu training and %zu validation episodes, %d features\n",
               info.task.c_str(), split.train.size(), split.validation.size(),
               info.config.layout.token_dim());

  const int members = std::max(1, o.ensemble);
  double before = 0.0, best = 0.0, worst = 0.0;  // validation losses
  ProgressBar bar("train-mlp", static_cast<long long>(members) * o.trainer.steps);
  std::vector<worldmodel::MlpDynamics> trained;
  std::vector<std::uint64_t> seeds;
  for (int m = 0; m < members; ++m) {
    worldmodel::MlpTrainOptions trainer = o.trainer;
    trainer.seed = o.trainer.seed + m;
    trained.emplace_back(info.config, trainer.seed);  // initial weights from the seed
    trained.back()->to(device);                       // it trains where it is
    if (m == 0) before = worldmodel::MlpDynamicsLoss(*trained.back(), split.validation);
    const std::string member = members > 1 ? "member " + std::to_string(m + 1) + ", " : "";
    worldmodel::TrainMlpDynamics(*trained.back(), split.train, trainer, [&](int step, double loss) {
      char note[48];
      std::snprintf(note, sizeof note, "loss %.3g", loss);
      bar.Update(static_cast<long long>(m) * o.trainer.steps + step, member + note);
    });
    seeds.push_back(trainer.seed);
    const double after = worldmodel::MlpDynamicsLoss(*trained.back(), split.validation);
    best = m == 0 ? after : std::min(best, after);
    worst = m == 0 ? after : std::max(worst, after);
  }
  char note[128];
  if (members == 1) {
    std::snprintf(note, sizeof note, "validation loss %.3g (untrained %.3g)", best, before);
  } else {
    std::snprintf(note, sizeof note,
                  "validation loss %.3g .. %.3g over %d members (untrained %.3g)", best, worst,
                  members, before);
  }
  bar.Finish(note);
  if (o.ensemble == 0) {
    worldmodel::SaveMlpCheckpoint(o.out, info, normalizer, *trained.front());
  } else {
    worldmodel::MlpEnsemble ensemble(trained);
    worldmodel::MlpEnsembleInfo ensemble_info;
    ensemble_info.model = info;
    ensemble_info.action_repeat = data.info.action_repeat;
    ensemble_info.seeds = seeds;
    worldmodel::SaveMlpEnsemble(o.out, ensemble_info, normalizer, *ensemble);
  }
  std::fprintf(stderr, "wrote %s\n", o.out.c_str());
}

}  // namespace

void AddTrainMlpCommand(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<TrainMlpCommandOptions>();
  o->command_line = command_line;
  CLI::App* cmd =
      app.add_subcommand("train-mlp", "Train the one-step MLP dynamics baseline on a dataset");
  cmd->add_option("--data", o->data,
                  "HDF5 dataset(s) from `dfmpc collect`, of one task and control rate (several: "
                  "trained on together, e.g. nominal and randomized)")
      ->required();
  cmd->add_option("--out", o->out, "MLP model file to write")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--tokenizer", o->tokenizer,
                  "a frame tokenizer from `dfmpc train-frames`: train on the latents of the "
                  "datasets' frames (the latent baseline of `dfmpc rollout --mlp`)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--steps", o->trainer.steps, "optimizer steps")->capture_default_str();
  cmd->add_option("--batch", o->trainer.batch_size, "transitions per step")->capture_default_str();
  cmd->add_option("--lr", o->trainer.learning_rate, "AdamW learning rate")->capture_default_str();
  cmd->add_option("--seed", o->trainer.seed, "seed of weights and data order")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", o->validation_fraction,
                  "fraction of episodes held out (the last ones), as in `dfmpc train`")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  AddDeviceFlag(*cmd, o->device);
  cmd->add_option("--ensemble", o->ensemble,
                  "train E MLPs (seeds seed .. seed + E - 1; PETS uses 5) into one ensemble file "
                  "for --policy mlp-mppi (0: one MLP, the single-model file of eval-model --mlp)")
      ->capture_default_str();
  cmd->callback([o] { RunTrainMlp(*o); });
}

}  // namespace dfmpc::cli
