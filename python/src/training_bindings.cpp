// dfmpc.train: a world model trained on dataset files, as `dfmpc train`,
// with the trainer's options as keywords and a progress callback; and
// dfmpc.distill, train_mlp and train_value alike.
#include <ATen/Parallel.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/distiller.h"
#include "distill_world_model.h"
#include "progress.h"
#include "train_mlp.h"
#include "train_value.h"
#include "train_world_model.h"

namespace py = pybind11;

namespace dfmpc::python {
namespace {

// Sets each keyword on the first of `targets` (bound option structs) that
// has it as an attribute; an unknown name is a TypeError.
void SetKeywords(const py::kwargs& keywords, const std::vector<py::object>& targets) {
  for (const auto& [key, value] : keywords) {
    const std::string name = py::str(key);
    bool set = false;
    for (const py::object& target : targets) {
      if (name.rfind("_", 0) != 0 && py::hasattr(target, name.c_str())) {
        py::setattr(target, name.c_str(), value);
        set = true;
        break;
      }
    }
    if (!set) throw py::type_error("unknown training option '" + name + "'");
  }
}

// LibTorch's intra-op threads for the training (process-wide, as `dfmpc
// train --threads` sets them); 0 leaves the setting.
void SetThreads(int threads) {
  if (threads < 0) throw py::value_error("threads must be >= 0 (0: leave LibTorch's setting)");
  if (threads > 0) at::set_num_threads(threads);
}

// One dict per validation row.
py::list LogRows(const std::vector<worldmodel::TrainLogRow>& log) {
  py::list rows;
  for (const worldmodel::TrainLogRow& row : log) {
    py::dict entry;
    entry["step"] = row.step;
    entry["train_loss"] = row.train_loss;
    entry["validation_loss"] = row.validation_loss;
    entry["learning_rate"] = row.learning_rate;
    entry["tokens_per_second"] = row.tokens_per_second;
    rows.append(entry);
  }
  return rows;
}

pipelines::WorldModelCallbacks ReportingCallbacks(const py::object& progress) {
  pipelines::WorldModelCallbacks callbacks;
  callbacks.on_progress = [&progress](const worldmodel::TrainProgress& p) {
    ReportProgress(progress, p.step, p.total_steps, p.loss, p.tokens_per_second);
  };
  return callbacks;
}

py::list Train(const std::vector<std::string>& data, const std::string& out,
               const std::string& tokenizer, bool resume, bool observation_deltas,
               bool known_actions, bool outcome_condition, bool hide_context_actions,
               double validation_fraction, double sensor_noise, const std::string& device,
               const std::string& prediction, int threads, const py::object& progress,
               const py::kwargs& options) {
  pipelines::WorldModelJob job;
  job.data = data;
  job.out = out;
  job.tokenizer = tokenizer;
  job.resume = resume;
  job.observation_deltas = observation_deltas;
  job.known_actions = known_actions;
  job.outcome_condition = outcome_condition;
  job.hide_context_actions = hide_context_actions;
  job.validation_fraction = validation_fraction;
  job.sensor_noise = sensor_noise;
  job.notes = "dfmpc.train from Python";
  py::object trainer = py::cast(job.trainer), model = py::cast(job.model);
  SetKeywords(options, {trainer, model});
  job.trainer = trainer.cast<worldmodel::TrainerOptions>();
  job.model = model.cast<worldmodel::TransformerConfig>();
  job.trainer.device = worldmodel::ParseDevice(device);
  job.trainer.prediction = worldmodel::ParsePrediction(prediction);
  SetThreads(threads);

  const pipelines::WorldModelCallbacks callbacks = ReportingCallbacks(progress);
  std::vector<worldmodel::TrainLogRow> log;
  {
    py::gil_scoped_release release;
    log = pipelines::TrainWorldModel(job, callbacks);
  }
  return LogRows(log);
}

py::list Distill(const std::string& model, const std::vector<std::string>& data,
                 const std::string& out, int teacher_levels, int window,
                 double validation_fraction, int threads, const py::object& progress,
                 const py::kwargs& options) {
  pipelines::DistillJob job;
  job.teacher = model;
  job.data = data;
  job.out = out;
  job.teacher_levels = teacher_levels;
  job.window = window;
  job.validation_fraction = validation_fraction;
  job.notes = "dfmpc.distill from Python";
  py::object distiller = py::cast(job.distiller);
  SetKeywords(options, {distiller});
  job.distiller = distiller.cast<worldmodel::DistillerOptions>();
  SetThreads(threads);
  const pipelines::WorldModelCallbacks callbacks = ReportingCallbacks(progress);
  std::vector<worldmodel::TrainLogRow> log;
  {
    py::gil_scoped_release release;
    log = pipelines::DistillWorldModel(job, callbacks);
  }
  return LogRows(log);
}

py::dict TrainMlp(const std::vector<std::string>& data, const std::string& out, int ensemble,
                  const std::string& tokenizer, double validation_fraction,
                  const std::string& device, int threads, const py::object& progress,
                  const py::kwargs& options) {
  pipelines::MlpJob job;
  job.data = data;
  job.out = out;
  job.ensemble = ensemble;
  job.tokenizer = tokenizer;
  job.validation_fraction = validation_fraction;
  job.device = device;
  job.notes = "dfmpc.train_mlp from Python";
  py::object trainer = py::cast(job.trainer);
  SetKeywords(options, {trainer});
  job.trainer = trainer.cast<worldmodel::MlpTrainOptions>();
  SetThreads(threads);
  pipelines::MlpCallbacks callbacks;
  callbacks.on_progress = [&progress](int member, int step, double loss) {
    ReportProgress(progress, member, step, loss);
  };
  pipelines::MlpResult result;
  {
    py::gil_scoped_release release;
    result = pipelines::TrainMlp(job, callbacks);
  }
  py::dict out_dict;
  out_dict["untrained_loss"] = result.untrained_loss;
  out_dict["best_loss"] = result.best_loss;
  out_dict["worst_loss"] = result.worst_loss;
  out_dict["members"] = result.members;
  return out_dict;
}

py::dict TrainValue(const std::vector<std::string>& data, const std::string& out, double discount,
                    int width, int layers, double validation_fraction, const std::string& device,
                    int threads, const py::object& progress, const py::kwargs& options) {
  pipelines::ValueJob job;
  job.data = data;
  job.out = out;
  job.config.discount = discount;
  job.config.width = width;
  job.config.hidden_layers = layers;
  job.validation_fraction = validation_fraction;
  job.device = device;
  job.notes = "dfmpc.train_value from Python";
  py::object trainer = py::cast(job.trainer);
  SetKeywords(options, {trainer});
  job.trainer = trainer.cast<worldmodel::MlpTrainOptions>();
  SetThreads(threads);
  pipelines::ValueCallbacks callbacks;
  callbacks.on_progress = [&progress](int step, double loss) {
    ReportProgress(progress, step, loss);
  };
  pipelines::ValueResult result;
  {
    py::gil_scoped_release release;
    result = pipelines::TrainValue(job, callbacks);
  }
  py::dict out_dict;
  out_dict["untrained_loss"] = result.untrained_loss;
  out_dict["loss"] = result.loss;
  out_dict["constant_loss"] = result.constant_loss;
  return out_dict;
}

}  // namespace

void BindTraining(py::module_& module) {
  using worldmodel::OptimizerOptions;
  py::class_<OptimizerOptions>(module, "OptimizerOptions",
                               "The optimiser's settings of every training run "
                               "(optimizer_options.h).")
      .def(py::init<>())
      .def_readwrite("steps", &OptimizerOptions::steps)
      .def_readwrite("batch_size", &OptimizerOptions::batch_size)
      .def_readwrite("learning_rate", &OptimizerOptions::learning_rate)
      .def_readwrite("min_learning_rate_ratio", &OptimizerOptions::min_learning_rate_ratio)
      .def_readwrite("warmup_steps", &OptimizerOptions::warmup_steps)
      .def_readwrite("weight_decay", &OptimizerOptions::weight_decay)
      .def_readwrite("grad_clip", &OptimizerOptions::grad_clip)
      .def_readwrite("seed", &OptimizerOptions::seed);
  using worldmodel::TrainerOptions;
  using worldmodel::TransformerConfig;
  py::class_<TrainerOptions, OptimizerOptions>(module, "TrainerOptions",
                                               "The trainer's options (trainer.h).")
      .def(py::init<>())
      .def_readwrite("window", &TrainerOptions::window)
      .def_readwrite("ema_decay", &TrainerOptions::ema_decay)
      .def_readwrite("clean_prob", &TrainerOptions::clean_prob)
      .def_readwrite("timestep_power", &TrainerOptions::timestep_power)
      .def_readwrite("known_action_prob", &TrainerOptions::known_action_prob)
      .def_readwrite("pyramid_prob", &TrainerOptions::pyramid_prob)
      .def_readwrite("outcome_dropout", &TrainerOptions::outcome_dropout)
      .def_readwrite("outcome_baseline_neighbours", &TrainerOptions::outcome_baseline_neighbours)
      .def_readwrite("validate_every", &TrainerOptions::validate_every)
      .def_readwrite("validation_windows", &TrainerOptions::validation_windows)
      .def_readwrite("checkpoint_every", &TrainerOptions::checkpoint_every)
      .def_readwrite("mixed_precision", &TrainerOptions::mixed_precision);
  py::class_<TransformerConfig>(module, "TransformerConfig",
                                "The world model's size (transformer.h).")
      .def(py::init<>())
      .def_readwrite("width", &TransformerConfig::width)
      .def_readwrite("depth", &TransformerConfig::depth)
      .def_readwrite("heads", &TransformerConfig::heads)
      .def_readwrite("mlp_ratio", &TransformerConfig::mlp_ratio)
      .def_readwrite("num_timesteps", &TransformerConfig::num_timesteps);
  using worldmodel::DistillerOptions;
  py::class_<DistillerOptions, OptimizerOptions>(module, "DistillerOptions",
                                                 "The step distiller's options (distiller.h).")
      .def(py::init<>())
      .def_readwrite("ema_decay", &DistillerOptions::ema_decay)
      .def_readwrite("clean_prob", &DistillerOptions::clean_prob)
      .def_readwrite("pyramid_prob", &DistillerOptions::pyramid_prob)
      .def_readwrite("known_action_prob", &DistillerOptions::known_action_prob)
      .def_readwrite("max_outcome_guidance", &DistillerOptions::max_outcome_guidance)
      .def_readwrite("outcome_dropout", &DistillerOptions::outcome_dropout)
      .def_readwrite("validate_every", &DistillerOptions::validate_every)
      .def_readwrite("validation_windows", &DistillerOptions::validation_windows);
  using worldmodel::MlpTrainOptions;
  py::class_<MlpTrainOptions, OptimizerOptions>(
      module, "MlpTrainOptions", "The MLP baseline's training options (mlp_dynamics.h).")
      .def(py::init<>());
  module.def("train_mlp", &TrainMlp, py::arg("data"), py::arg("out"), py::kw_only(),
             py::arg("ensemble") = 0, py::arg("tokenizer") = "",
             py::arg("validation_fraction") = 0.1, py::arg("device") = "cpu",
             py::arg("threads") = 0, py::arg("progress") = py::none(),
             "Trains the MLP dynamics baseline (ensemble E > 0: E members in one file, the "
             "model of the mlp-mppi peer) as `dfmpc train-mlp`. Keywords set MlpTrainOptions "
             "fields. progress(member, step, loss) is called after every step. Returns the "
             "validation losses.");
  module.def("train_value", &TrainValue, py::arg("data"), py::arg("out"), py::kw_only(),
             py::arg("discount") = 0.99, py::arg("width") = 256, py::arg("layers") = 2,
             py::arg("validation_fraction") = 0.1, py::arg("device") = "cpu",
             py::arg("threads") = 0, py::arg("progress") = py::none(),
             "Trains the critic of a planner's value (PlannerOptions.value_model) as "
             "`dfmpc train-value`; keywords set MlpTrainOptions fields (3000 steps unless "
             "given). progress(step, loss) is called after every step. Returns the "
             "validation losses: trained, untrained, and of a constant value.");
  module.def("distill", &Distill, py::arg("model"), py::arg("data"), py::arg("out"),
             py::kw_only(), py::arg("teacher_levels") = 0, py::arg("window") = 0,
             py::arg("validation_fraction") = 0.1, py::arg("threads") = 0,
             py::arg("progress") = py::none(),
             "Distils `model` into one that samples with half its levels K and writes it to "
             "`out` (after every validation), as `dfmpc distill`: teacher_levels 0 is a "
             "distilled teacher's own K, else 16; window 0 the teacher's training window. "
             "Keywords set DistillerOptions fields (steps, batch_size, learning_rate, seed, "
             "max_outcome_guidance for an outcome-conditioned teacher, ...). progress(step, total, loss, tokens_per_second) is called after every step. "
             "Returns the validation log.");
  module.def("train", &Train, py::arg("data"), py::arg("out"), py::kw_only(),
             py::arg("tokenizer") = "", py::arg("resume") = false,
             py::arg("observation_deltas") = true, py::arg("known_actions") = false,
             py::arg("outcome_condition") = false, py::arg("hide_context_actions") = false,
             py::arg("validation_fraction") = 0.1, py::arg("sensor_noise") = 0.0,
             py::arg("device") = "cpu", py::arg("prediction") = "v", py::arg("threads") = 0,
             py::arg("progress") = py::none(),
             "Trains a world model on dataset files and writes it to `out` (after every "
             "validation; `<stem>.state` resumes), as `dfmpc train`. Keywords set "
             "TrainerOptions (steps, batch_size, window, learning_rate, seed, ...) and "
             "TransformerConfig (width, depth, heads) fields. progress(step, total, loss, "
             "tokens_per_second) is called after every step. Returns the validation log.");
}

}  // namespace dfmpc::python
