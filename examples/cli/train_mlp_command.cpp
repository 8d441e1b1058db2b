// dfmpc train-mlp: train the one-step MLP dynamics baseline on a dataset,
// with the same train / validation episode split as `dfmpc train`; with
// --ensemble E, E of them from seeds seed .. seed + E - 1 in one ensemble
// file (the model of `--policy mlp-mppi`).
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "optimizer_flags.h"
#include "output_path.h"
#include "progress_bar.h"
#include "train_mlp.h"

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
  at::set_num_threads(o.threads);
  pipelines::MlpJob job;
  job.data = o.data;
  job.out = o.out;
  job.tokenizer = o.tokenizer;
  job.validation_fraction = o.validation_fraction;
  job.device = o.device;
  job.ensemble = o.ensemble;
  job.trainer = o.trainer;
  job.notes = o.command_line;
  const int members = std::max(1, o.ensemble);
  ProgressBar bar("train-mlp", static_cast<long long>(members) * o.trainer.steps);
  pipelines::MlpCallbacks callbacks;
  callbacks.on_start = [](const std::string& task, size_t train, size_t validation, int features) {
    std::fprintf(stderr, "train-mlp: %s, %zu training and %zu validation episodes, %d features\n",
                 task.c_str(), train, validation, features);
  };
  callbacks.on_progress = [&](int member, int step, double loss) {
    char note[48];
    std::snprintf(note, sizeof note, "loss %.3g", loss);
    const std::string prefix =
        members > 1 ? "member " + std::to_string(member + 1) + ", " : std::string();
    bar.Update(static_cast<long long>(member) * o.trainer.steps + step, prefix + note);
  };
  const pipelines::MlpResult result = pipelines::TrainMlp(job, callbacks);
  char note[128];
  if (members == 1) {
    std::snprintf(note, sizeof note, "validation loss %.3g (untrained %.3g)", result.best_loss,
                  result.untrained_loss);
  } else {
    std::snprintf(note, sizeof note,
                  "validation loss %.3g .. %.3g over %d members (untrained %.3g)", result.best_loss,
                  result.worst_loss, members, result.untrained_loss);
  }
  bar.Finish(note);
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
  AddOptimizerFlags(*cmd, o->trainer, "transitions", "weights and data order");
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
