// dfmpc train-value: train the critic whose value a planner adds to its
// plans' cost (--value-model), on the same datasets and episode split as
// `dfmpc train`.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "optimizer_flags.h"
#include "output_path.h"
#include "progress_bar.h"
#include "train_value.h"

namespace dfmpc::cli {
namespace {

struct TrainValueCommandOptions {
  pipelines::ValueJob job;
  int threads = 1;
};

void RunTrainValue(const TrainValueCommandOptions& o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  at::set_num_threads(o.threads);
  ProgressBar bar("train-value", o.job.trainer.steps);
  pipelines::ValueCallbacks callbacks;
  callbacks.on_start = [&](const std::string& task, size_t train, size_t validation,
                           long long rows) {
    std::fprintf(stderr,
                 "train-value: %s, %zu training and %zu validation episodes, %lld training steps "
                 "(the last %d of each episode left out), discount %g\n",
                 task.c_str(), train, validation, rows,
                 worldmodel::TruncatedTail(o.job.config.discount), o.job.config.discount);
  };
  callbacks.on_progress = [&](int step, double loss) {
    char note[48];
    std::snprintf(note, sizeof note, "loss %.3g", loss);
    bar.Update(step, note);
  };
  const pipelines::ValueResult result = pipelines::TrainValue(o.job, callbacks);
  char note[160];
  std::snprintf(note, sizeof note, "validation loss %.3g (untrained %.3g, a constant value %.3g)",
                result.loss, result.untrained_loss, result.constant_loss);
  bar.Finish(note);
  std::fprintf(stderr, "wrote %s\n", o.job.out.c_str());
}

}  // namespace

void AddTrainValueCommand(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<TrainValueCommandOptions>();
  pipelines::ValueJob& job = o->job;
  job.notes = command_line;
  CLI::App* cmd = app.add_subcommand(
      "train-value", "Train a critic of the data's returns, the planner's value (--value-model)");
  cmd->add_option("--data", job.data,
                  "HDF5 dataset(s) from `dfmpc collect`, of one task and control rate")
      ->required();
  cmd->add_option("--out", job.out, "value model file to write")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--discount", job.config.discount,
                  "gamma per control step, in (0, 1): 0.99 looks about 100 steps ahead")
      ->capture_default_str();
  cmd->add_option("--width", job.config.width, "hidden units per layer")->capture_default_str();
  cmd->add_option("--layers", job.config.hidden_layers, "hidden layers")->capture_default_str();
  AddOptimizerFlags(*cmd, job.trainer, "steps of the data", "weights and data order");
  cmd->add_option("--validation-fraction", job.validation_fraction,
                  "fraction of episodes held out (the last ones), as in `dfmpc train`")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  AddDeviceFlag(*cmd, job.device);
  cmd->callback([o] { RunTrainValue(*o); });
}

}  // namespace dfmpc::cli
