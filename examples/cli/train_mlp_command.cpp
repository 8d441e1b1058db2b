// dfmpc train-mlp: train the one-step MLP dynamics baseline on a dataset,
// with the same train / validation episode split as `dfmpc train`.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "dataset_tokens.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "output_path.h"
#include "progress_bar.h"

namespace dfmpc::cli {
namespace {

struct TrainMlpCommandOptions {
  std::string data;
  std::string out;
  double validation_fraction = 0.1;
  int threads = 1;
  worldmodel::MlpTrainOptions trainer;
  std::string command_line;
};

void RunTrainMlp(const TrainMlpCommandOptions& o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  at::set_num_threads(o.threads);
  o.trainer.Validate();

  const envs::Dataset dataset = envs::ReadDataset(o.data, /*load_frames=*/false);
  worldmodel::MlpModelInfo info;
  info.task = dataset.info.task;
  // The MLP predicts the observation change itself.
  info.config.layout = DatasetLayout(dataset, /*observation_deltas=*/false);
  EpisodeSplit split = SplitEpisodes(EpisodeTokenSequences(dataset, info.config.layout),
                                     o.validation_fraction, o.data);
  const worldmodel::Normalizer normalizer = FitAndNormalize(split);

  info.notes = o.command_line;
  std::fprintf(stderr, "train-mlp: %s, %zu training and %zu validation episodes, %d features\n",
               info.task.c_str(), split.train.size(), split.validation.size(),
               info.config.layout.token_dim());

  worldmodel::MlpDynamics model(info.config, o.trainer.seed);
  const double before = worldmodel::MlpDynamicsLoss(*model, split.validation);
  ProgressBar bar("train-mlp", o.trainer.steps);
  worldmodel::TrainMlpDynamics(*model, split.train, o.trainer, [&](int step, double loss) {
    char note[48];
    std::snprintf(note, sizeof note, "loss %.3g", loss);
    bar.Update(step, note);
  });
  const double after = worldmodel::MlpDynamicsLoss(*model, split.validation);
  char note[96];
  std::snprintf(note, sizeof note, "validation loss %.3g (untrained %.3g)", after, before);
  bar.Finish(note);
  worldmodel::SaveMlpCheckpoint(o.out, info, normalizer, *model);
  std::fprintf(stderr, "wrote %s\n", o.out.c_str());
}

}  // namespace

void AddTrainMlpCommand(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<TrainMlpCommandOptions>();
  o->command_line = command_line;
  CLI::App* cmd =
      app.add_subcommand("train-mlp", "Train the one-step MLP dynamics baseline on a dataset");
  cmd->add_option("--data", o->data, "HDF5 dataset from `dfmpc collect`")->required();
  cmd->add_option("--out", o->out, "MLP model file to write")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--steps", o->trainer.steps, "optimizer steps")->capture_default_str();
  cmd->add_option("--batch", o->trainer.batch_size, "transitions per step")->capture_default_str();
  cmd->add_option("--lr", o->trainer.learning_rate, "AdamW learning rate")->capture_default_str();
  cmd->add_option("--seed", o->trainer.seed, "seed of weights and data order")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", o->validation_fraction,
                  "fraction of episodes held out (the last ones), as in `dfmpc train`")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  cmd->callback([o] { RunTrainMlp(*o); });
}

}  // namespace dfmpc::cli
