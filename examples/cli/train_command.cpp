// dfmpc train: train a diffusion-forcing world model on a dataset.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/trainer.h"
#include "optimizer_flags.h"
#include "output_path.h"
#include "progress_bar.h"
#include "train_world_model.h"
#include "training_plot.h"

namespace dfmpc::cli {
namespace {

struct TrainCommandOptions {
  std::vector<std::string> data;
  std::string out;
  std::string tokenizer;  // a frame tokenizer: train a video model
  bool resume = false;
  bool absolute_only = false;
  bool known_actions = false;
  bool outcome_condition = false;
  bool hide_context_actions = false;
  double validation_fraction = 0.1;
  double sensor_noise = 0.0;
  int threads = 1;
  std::string device = "cpu";
  std::string store = "127.0.0.1:29500";  // HOST:PORT of rank 0's TCP store
  std::string prediction = "v";
  worldmodel::TransformerConfig model;
  worldmodel::TrainerOptions trainer;
  std::string command_line;
};

void RunTrain(TrainCommandOptions o) {
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1");
  at::set_num_threads(o.threads);
  o.trainer.prediction = worldmodel::ParsePrediction(o.prediction);
  o.trainer.device = worldmodel::ParseDevice(o.device);
  const size_t colon = o.store.rfind(':');
  const std::string port = colon == std::string::npos ? "" : o.store.substr(colon + 1);
  if (colon == 0 || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    throw std::invalid_argument("--store must be HOST:PORT, got '" + o.store + "'");
  }
  o.trainer.data_parallel.store_host = o.store.substr(0, colon);
  o.trainer.data_parallel.store_port = std::stoi(port);
  o.trainer.Validate();
  const bool writes = o.trainer.data_parallel.rank == 0;

  pipelines::WorldModelJob job;
  job.data = o.data;
  job.out = o.out;
  job.tokenizer = o.tokenizer;
  job.resume = o.resume;
  job.observation_deltas = !o.absolute_only;
  job.known_actions = o.known_actions;
  job.outcome_condition = o.outcome_condition;
  job.hide_context_actions = o.hide_context_actions;
  job.validation_fraction = o.validation_fraction;
  job.sensor_noise = o.sensor_noise;
  job.model = o.model;
  job.trainer = o.trainer;
  job.notes = o.command_line;
  const std::string stem = pipelines::OutputStem(o.out);
  ProgressBar bar("train", o.trainer.steps);
  pipelines::WorldModelCallbacks callbacks;
  callbacks.on_start = [&](const worldmodel::ModelInfo& info, size_t train, size_t validation) {
    std::fprintf(stderr,
                 "train: %s, %zu training and %zu validation episodes, %d features, on %s\n",
                 info.task.c_str(), train, validation, info.config.token_dim,
                 o.trainer.device.str().c_str());
    if (o.trainer.data_parallel.enabled()) {
      std::fprintf(stderr, "train: rank %d of %d, store %s, %d windows per process\n",
                   o.trainer.data_parallel.rank, o.trainer.data_parallel.world_size,
                   o.store.c_str(), o.trainer.batch_size / o.trainer.data_parallel.world_size);
    }
  };
  callbacks.on_progress = ShowTrainingProgress(bar);
  callbacks.on_log = [&](const std::vector<worldmodel::TrainLogRow>& log) {
    WriteTrainingCsv(stem + "_loss.csv", log);
    WriteTrainingPlot(stem + "_loss.png", log);
  };
  const std::vector<worldmodel::TrainLogRow> log = pipelines::TrainWorldModel(job, callbacks);
  char note[96];
  std::snprintf(note, sizeof note, "validation loss %.4f", log.back().validation_loss);
  bar.Finish(note);
  if (writes) {
    std::fprintf(stderr, "wrote %s, %s_loss.csv, %s_loss.png (resume state: %s.state)\n",
                 o.out.c_str(), stem.c_str(), stem.c_str(), stem.c_str());
  } else {
    std::fprintf(stderr, "rank %d done (rank 0 writes the files)\n", o.trainer.data_parallel.rank);
  }
}

}  // namespace

void AddTrainCommand(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<TrainCommandOptions>();
  o->command_line = command_line;
  CLI::App* cmd = app.add_subcommand("train", "Train a diffusion-forcing world model on a dataset");
  cmd->add_option("--data", o->data,
                  "HDF5 dataset(s) from `dfmpc collect`, of one task and control rate (several: "
                  "trained on together, e.g. nominal and randomized)")
      ->required();
  cmd->add_option("--out", o->out, "model checkpoint to write (side files share its stem)")
      ->required()
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--tokenizer", o->tokenizer,
                  "a frame tokenizer from `dfmpc train-frames`: train a video model on the latents "
                  "of the datasets' frames (written with the tokenizer inside)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--resume", o->resume, "continue from <stem>.state of an interrupted run");
  cmd->add_flag("--no-observation-deltas", o->absolute_only,
                "tokens [a_{t-1}, o_t] without the change o_t - o_{t-1}");
  AddOptimizerFlags(*cmd, o->trainer, "windows", "weights, data order and noise");
  cmd->add_option("--window", o->trainer.window, "tokens per window (longest attention span)")
      ->capture_default_str();
  cmd->add_option("--ema", o->trainer.ema_decay, "EMA decay of the sampling weights")
      ->capture_default_str();
  cmd->add_option("--pyramid-prob", o->trainer.pyramid_prob,
                  "probability that a window gets the pyramid's noise pattern")
      ->capture_default_str();
  cmd->add_option("--clean-prob", o->trainer.clean_prob,
                  "probability that a training token is clean")
      ->capture_default_str();
  cmd->add_option("--sensor-noise", o->sensor_noise,
                  "train for noisy sensors: the context tokens of every window are rebuilt from "
                  "observations with Gaussian noise of a std drawn from [0, STD] (observation "
                  "units; 0: exact context)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--known-actions", o->known_actions,
                "give the model known actions clean through a side input (dynamics rollouts "
                "follow them exactly; see --known-action-prob)");
  cmd->add_option("--known-action-prob", o->trainer.known_action_prob,
                  "with --known-actions: probability that a training token's action is given")
      ->capture_default_str();
  cmd->add_flag("--hide-context-actions", o->hide_context_actions,
                "the model does not read a clean token's action (the action before its "
                "observation), so a generated action follows the robot, not the last action");
  CLI::Option* outcome_condition = cmd->add_flag(
      "--outcome-condition", o->outcome_condition,
      "condition the model on each window's outcome (its mean reward's quantile among the "
      "training windows), for the planner's outcome_guidance");
  cmd->add_option("--outcome-dropout", o->trainer.outcome_dropout,
                  "with --outcome-condition: probability that a window gets no condition")
      ->needs(outcome_condition)
      ->capture_default_str();
  cmd->add_option("--outcome-baseline", o->trainer.outcome_baseline_neighbours,
                  "with --outcome-condition: credit a window's actions, not where it starts: "
                  "its outcome is its mean reward less that of the windows the K other "
                  "episodes nearest to its first token began there with (0: the mean reward)")
      ->check(CLI::NonNegativeNumber)
      ->needs(outcome_condition);
  cmd->add_option("--timestep-power", o->trainer.timestep_power,
                  "noisy tokens get timestep floor(T v^P), v uniform (1: uniform; >1: more low "
                  "noise)")
      ->capture_default_str();
  cmd->add_option("--prediction", o->prediction, "model target: v, x0 or eps")
      ->capture_default_str();
  cmd->add_option("--validate-every", o->trainer.validate_every,
                  "steps between validations (and model/plot writes)")
      ->capture_default_str();
  cmd->add_option("--checkpoint-every", o->trainer.checkpoint_every, "steps between resume states")
      ->capture_default_str();
  cmd->add_option("--validation-fraction", o->validation_fraction,
                  "fraction of episodes held out (the last ones)")
      ->capture_default_str();
  cmd->add_option("--width", o->model.width, "model width")->capture_default_str();
  cmd->add_option("--depth", o->model.depth, "transformer blocks")->capture_default_str();
  cmd->add_option("--heads", o->model.heads, "attention heads")->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  AddDeviceFlag(*cmd, o->device);
  cmd->add_flag("--mixed-precision", o->trainer.mixed_precision,
                "bf16 autocast of the forward pass (CUDA only)");
  cmd->add_option("--world-size", o->trainer.data_parallel.world_size,
                  "processes training together, --batch being their global batch (data "
                  "parallel; scripts/train_parallel.sh starts them on one machine)")
      ->capture_default_str();
  cmd->add_option("--rank", o->trainer.data_parallel.rank,
                  "this process in [0, world size); rank 0 serves the store and writes the files")
      ->capture_default_str();
  cmd->add_option("--store", o->store, "HOST:PORT where rank 0 serves the rendezvous store")
      ->capture_default_str();
  cmd->add_option("--dist-timeout", o->trainer.data_parallel.timeout_seconds,
                  "seconds a process waits for the others (a missing or dead rank is an error "
                  "after it)")
      ->capture_default_str();
  cmd->callback([o] { RunTrain(*o); });
}

}  // namespace dfmpc::cli
