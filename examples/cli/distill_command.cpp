// dfmpc distill: halve the sampling levels of a world model by progressive
// step distillation.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "distill_world_model.h"
#include "optimizer_flags.h"
#include "output_path.h"
#include "progress_bar.h"
#include "training_plot.h"

namespace dfmpc::cli {
namespace {

struct DistillCommandOptions {
  pipelines::DistillJob job;
  int threads = 1;
};

void RunDistill(DistillCommandOptions o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  at::set_num_threads(o.threads);
  if (o.job.out == o.job.teacher) {
    throw std::invalid_argument("--out must differ from --model: the teacher stays as it is");
  }
  const std::string stem = pipelines::OutputStem(o.job.out);
  ProgressBar bar("distill", o.job.distiller.steps);
  pipelines::WorldModelCallbacks callbacks;
  callbacks.on_start = [&](const worldmodel::ModelInfo& info, size_t train, size_t validation) {
    std::fprintf(
        stderr, "distill: %s, K = %d -> %d levels, %zu training and %zu validation episodes\n",
        info.task.c_str(), 2 * info.sampling_levels, info.sampling_levels, train, validation);
  };
  callbacks.on_progress = ShowTrainingProgress(bar);
  callbacks.on_log = [&](const std::vector<worldmodel::TrainLogRow>& log) {
    WriteTrainingCsv(stem + "_loss.csv", log);
    WriteTrainingPlot(stem + "_loss.png", log,
                      "Step distillation: student against two teacher steps");
  };
  const std::vector<worldmodel::TrainLogRow> log = pipelines::DistillWorldModel(o.job, callbacks);
  char note[96];
  std::snprintf(note, sizeof note, "validation loss %.4f", log.back().validation_loss);
  bar.Finish(note);
  std::fprintf(stderr, "wrote %s, %s_loss.csv, %s_loss.png\n", o.job.out.c_str(), stem.c_str(),
               stem.c_str());
}

}  // namespace

void AddDistillCommand(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<DistillCommandOptions>();
  o->job.notes = command_line;
  CLI::App* cmd = app.add_subcommand(
      "distill",
      "Distil a world model into one that samples with half its levels K (progressive step "
      "distillation; run it again on the result to halve K again)");
  cmd->add_option("--model", o->job.teacher, "the teacher: a world model file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--data", o->job.data,
                  "HDF5 dataset(s) of the teacher's task and control rate (its training data)")
      ->required();
  cmd->add_option("--out", o->job.out, "the student's model file (side files share its stem)")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--teacher-levels", o->job.teacher_levels,
                  "the teacher's K, even (default: a distilled teacher's own, else 16)");
  worldmodel::DistillerOptions& d = o->job.distiller;
  AddOptimizerFlags(*cmd, d, "windows", "windows and noise");
  cmd->add_option("--window", o->job.window,
                  "tokens per window (default: the teacher's training window)");
  cmd->add_option("--ema", d.ema_decay, "EMA decay of the student's sampling weights")
      ->capture_default_str();
  cmd->add_option("--pyramid-prob", d.pyramid_prob,
                  "probability that a window gets the pyramid's pattern of levels")
      ->capture_default_str();
  cmd->add_option("--clean-prob", d.clean_prob, "probability that a token is clean")
      ->capture_default_str();
  cmd->add_option("--max-outcome-guidance", d.max_outcome_guidance,
                  "an outcome-conditioned teacher's student takes the guidance weight as an "
                  "input, up to this (CFG-aware distillation: guidance in one call per level; 0: a "
                  "CFG-aware teacher's own)")
      ->capture_default_str();
  cmd->add_option("--outcome-dropout", d.outcome_dropout,
                  "fraction of windows distilled without a condition (conditioned teachers)")
      ->capture_default_str();
  cmd->add_option("--validate-every", d.validate_every,
                  "steps between validations (and writes of the student)")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", o->job.validation_fraction,
                  "fraction of episodes held out (the last ones)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  cmd->callback([o] { RunDistill(*o); });
}

}  // namespace dfmpc::cli
