// dfmpc.Planner, dfmpc.AsyncPlanner and their options and statistics.
// Model calls release the GIL, so other Python threads run meanwhile.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "arrays.h"
#include "bindings.h"
#include "dfmpc/planner/async_planner.h"
#include "dfmpc/planner/model_task.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/device.h"
#include "guarded.h"

namespace py = pybind11;

namespace dfmpc::python {
namespace {

using planner::AsyncPlanner;
using planner::Planner;
using planner::PlannerOptions;
using Clock = std::chrono::steady_clock;

// `value` as `option`'s kind: a Python bool, int, float or str; a value of
// another type is a TypeError naming the option.
planner::OptionValue ToOptionValue(const planner::OptionDescriptor& option,
                                   const py::handle& value) {
  using planner::OptionKind;
  const bool is_bool = py::isinstance<py::bool_>(value);
  const bool is_int = py::isinstance<py::int_>(value) && !is_bool;
  planner::OptionValue converted = false;
  if (option.kind == OptionKind::kFlag && is_bool) {
    converted = value.cast<bool>();
  } else if (option.kind == OptionKind::kInteger && is_int) {
    converted = value.cast<std::int64_t>();
  } else if (option.kind == OptionKind::kNumber && (is_int || py::isinstance<py::float_>(value))) {
    converted = value.cast<double>();
  } else if (option.kind == OptionKind::kText && py::isinstance<py::str>(value)) {
    converted = value.cast<std::string>();
  } else {
    throw py::type_error(
        "planner option '" + std::string(option.key) + "' must be " + option.RangeText() + " (" +
        (option.kind == OptionKind::kNumber    ? "a number"
         : option.kind == OptionKind::kInteger ? "an int"
         : option.kind == OptionKind::kFlag    ? "a bool"
                                               : "a str") +
        "), got " + std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
  return planner::ConvertOptionValue(option, converted);
}

const planner::OptionDescriptor& Option(const std::string& key) {
  try {
    return planner::FindPlannerOption(key);
  } catch (const std::invalid_argument& error) {
    throw py::type_error(error.what());  // as for any unknown keyword
  }
}

// Keywords as overrides: unknown names are a TypeError, as for any Python call.
planner::PlannerOverrides Overrides(const py::kwargs& keywords) {
  planner::PlannerOverrides overrides;
  for (const auto& [key, value] : keywords) {
    const std::string name = py::str(key);
    overrides.Set(name, ToOptionValue(Option(name), value));
  }
  return overrides;
}

// A Planner the Python object owns until it hands it to an AsyncPlanner.
using PyPlanner = Guarded<Planner>;
using PyAsyncPlanner = Guarded<AsyncPlanner>;

std::unique_ptr<PyPlanner> PlannerFromFile(const std::string& model, const std::string& task,
                                           const py::kwargs& keywords) {
  const planner::PlannerOverrides overrides = Overrides(keywords);
  // The device decides where the model loads, so it is read first.
  PlannerOptions named;
  overrides.ApplyTo(named);
  const c10::Device device = worldmodel::ParseDevice(named.device.empty() ? "cpu" : named.device);
  // A given task (a name or a folder) supplies the cost; else the model's own.
  std::optional<task::TaskSpec> spec;
  if (!task.empty()) spec = task::LoadTaskSpec(task);
  worldmodel::Checkpoint checkpoint;
  {
    py::gil_scoped_release release;
    checkpoint = worldmodel::LoadCheckpoint(model, {spec ? spec->name : "", 0}, device);
  }
  if (!spec) spec = planner::ModelTask(checkpoint.info, model);
  const PlannerOptions options =
      planner::ResolvePlannerOptions(*spec, checkpoint.info.sampling_levels, overrides).options;
  return std::make_unique<PyPlanner>(
      std::make_unique<Planner>(
          checkpoint, planner::MakeTaskCost(*spec, checkpoint.info.action_repeat), options),
      "this Planner was handed to an AsyncPlanner and cannot be used");
}

// An observation for `planner` (its size), checked.
template <typename P>
Eigen::VectorXd Observation(Guarded<P>& planner, const py::handle& values) {
  const int size = planner.Held([](P& p) { return p.observation_dim(); });
  return ToVector(values, size, "observation");
}

std::chrono::microseconds Microseconds(double seconds, const char* name) {
  if (!(seconds >= 0.0 && seconds <= 3600.0)) {
    throw py::value_error(std::string(name) + " must be in [0, 3600] seconds");
  }
  return std::chrono::microseconds(static_cast<std::int64_t>(seconds * 1e6));
}

std::string OptionsRepr(const PlannerOptions& options) {
  std::string text = "PlannerOptions(";
  for (const planner::OptionDescriptor& option : planner::PlannerOptionTable()) {
    text += std::string(text.back() == '(' ? "" : ", ") + option.key + "=" +
            option.get(options).ToString();
  }
  return text + ")";
}

py::object ToPython(const planner::OptionValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value.value());
}

void BindOptions(py::module_& module) {
  py::class_<PlannerOptions> options(
      module, "PlannerOptions",
      "The planner's options; each attribute is a task file [planner] key "
      "(docs/planner_options.md). PlannerOptions(**keywords) sets some.");
  options.def(py::init([](const py::kwargs& keywords) {
    PlannerOptions made;
    Overrides(keywords).ApplyTo(made);
    return made;
  }));
  options.def("__repr__", &OptionsRepr);
  // Every option of the table, under its key (and its older spellings).
  for (const planner::OptionDescriptor& descriptor : planner::PlannerOptionTable()) {
    const planner::OptionDescriptor* option = &descriptor;
    const auto get = [option](const PlannerOptions& o) { return ToPython(option->get(o)); };
    const auto set = [option](PlannerOptions& o, const py::handle& value) {
      option->set(o, ToOptionValue(*option, value));
    };
    options.def_property(option->key, get, set, option->doc);
    for (const std::string& alias : option->aliases) {
      // The name must outlive the module: the table is static.
      options.def_property(alias.c_str(), get, set, option->doc);
    }
  }
  module.def(
      "tuned_options", [](const std::string& task) { return planner::TunedPlannerOptions(task); },
      py::arg("task"), "The options a task's file tunes (a built-in name or a task folder).");
  module.def(
      "task_file", [](const std::string& task) { return task::LoadTaskSpec(task).file; },
      py::arg("task"), "The path of a task's file (a built-in name or a task folder).");
  module.def(
      "model_info",
      [](const std::string& path) {
        worldmodel::Checkpoint checkpoint;
        {
          py::gil_scoped_release release;
          checkpoint = worldmodel::LoadCheckpoint(path);
        }
        const worldmodel::ModelInfo& info = checkpoint.info;
        py::dict row;
        row["task"] = info.task;
        row["sampling_levels"] = info.sampling_levels;
        row["num_timesteps"] = info.num_timesteps;
        row["train_window"] =
            info.train_window > 0 ? info.train_window : checkpoint.model->config().max_positions;
        row["action_repeat"] = info.action_repeat;
        row["outcome_condition"] = info.config.outcome_input;
        row["max_outcome_guidance"] = info.config.max_outcome_guidance;
        row["hidden_clean_actions"] = info.config.hidden_clean_actions;
        return row;
      },
      py::arg("path"),
      "A world model file's task, distilled levels (0: not distilled), training timesteps, "
      "window (plan plus context tokens), action repeat, whether it takes the outcome "
      "condition (the planner's outcome_guidance), and the largest guidance weight a "
      "CFG-aware student takes in one call (0: not one), and the action features its "
      "clean tokens hide (train's hide_context_actions; 0: none).");
  module.def(
      "option_table",
      [] {
        py::list rows;
        for (const planner::OptionDescriptor& option : planner::PlannerOptionTable()) {
          py::dict row;
          row["key"] = option.key;
          row["default"] = ToPython(option.get(PlannerOptions()));
          row["range"] = option.RangeText();
          row["per_task"] = option.per_task;
          row["doc"] = option.doc;
          rows.append(row);
        }
        return rows;
      },
      "Every planner option: key, default, range, whether a task file may set it, and doc.");
}

void BindStats(py::module_& module) {
  py::class_<planner::StepStats>(module, "StepStats", "What the last optimization did.")
      .def_readonly("calls", &planner::StepStats::calls)
      .def_readonly("token_forwards", &planner::StepStats::token_forwards)
      .def_readonly("steps_caught_up", &planner::StepStats::steps_caught_up)
      .def_readonly("cut_short", &planner::StepStats::cut_short)
      .def_readonly("refresh_postponed", &planner::StepStats::refresh_postponed)
      .def_readonly("deferred", &planner::StepStats::deferred)
      .def_readonly("needed_ms", &planner::StepStats::needed_ms)
      .def_readonly("stopped", &planner::StepStats::stopped)
      .def_readonly("graph_replays", &planner::StepStats::graph_replays)
      .def_readonly("latency_ms", &planner::StepStats::latency_ms)
      .def_readonly("fallback", &planner::StepStats::fallback);
  py::class_<planner::AsyncStats>(module, "AsyncStats", "An AsyncPlanner's counters.")
      .def_readonly("steps", &planner::AsyncStats::steps)
      .def_readonly("misses", &planner::AsyncStats::misses)
      .def_readonly("max_action_age", &planner::AsyncStats::max_action_age)
      .def_readonly("total_action_age", &planner::AsyncStats::total_action_age)
      .def_readonly("plans", &planner::AsyncStats::plans)
      .def_readonly("total_plan_ms", &planner::AsyncStats::total_plan_ms)
      .def_readonly("max_plan_ms", &planner::AsyncStats::max_plan_ms)
      .def_readonly("planner_errors", &planner::AsyncStats::planner_errors)
      .def_readonly("last_error", &planner::AsyncStats::last_error)
      .def_readonly("fallbacks", &planner::AsyncStats::fallbacks)
      .def_readonly("cut_short", &planner::AsyncStats::cut_short)
      .def_readonly("late", &planner::AsyncStats::late)
      .def_readonly("stopped", &planner::AsyncStats::stopped)
      .def_readonly("last_step", &planner::AsyncStats::last_step);
  py::class_<planner::Plan>(module, "Plan", "The kept plan, in the environment's units.")
      .def_property_readonly("actions", [](const planner::Plan& p) { return ToNumpy(p.actions); })
      .def_property_readonly("observations",
                             [](const planner::Plan& p) { return ToNumpy(p.observations); })
      .def_property_readonly("tokens", [](const planner::Plan& p) { return ToNumpy(p.tokens); })
      .def_readonly("levels", &planner::Plan::levels)
      .def_readonly("step", &planner::Plan::step)
      .def_readonly("cost", &planner::Plan::cost);
}

}  // namespace

void BindPlanner(py::module_& module) {
  BindOptions(module);
  BindStats(module);
  py::class_<PyPlanner>(module, "Planner", "Plans actions with a world model (planner.h).")
      .def_static("from_file", &PlannerFromFile, py::arg("model"), py::arg("task") = "",
                  "Loads a model file with its task's cost and tuned options; keywords override "
                  "options (PlannerOptions). A task name, when given, must be the model's.")
      .def(
          "reset",
          [](PyPlanner& self, const py::handle& observation) {
            const Eigen::VectorXd checked = Observation(self, observation);
            self.Released([&](Planner& p) { p.Reset(checked); });
          },
          py::arg("observation"), "Starts an episode (plans from noise: K model calls).")
      .def(
          "act",
          [](PyPlanner& self, const py::handle& observation) {
            const Eigen::VectorXd checked = Observation(self, observation);
            return ToNumpy(self.Released([&](Planner& p) { return p.Act(checked); }));
          },
          py::arg("observation"), "Observe, optimize and return the action to apply now.")
      .def(
          "observe",
          [](PyPlanner& self, const py::handle& observation, const py::object& action) {
            const Eigen::VectorXd checked = Observation(self, observation);
            if (action.is_none()) {
              self.Held([&](Planner& p) { p.Observe(checked); });
              return;
            }
            const int size = self.Held([](Planner& p) { return p.action_dim(); });
            const Eigen::VectorXd applied = ToVector(action, size, "action");
            self.Held([&](Planner& p) { p.Observe(checked, applied); });
          },
          py::arg("observation"), py::arg("action") = py::none(),
          "Queues an observation and the action that led to it (default: the planner's).")
      .def(
          "optimize",
          [](PyPlanner& self, std::optional<double> deadline_s, const std::string& deadline_kind) {
            const planner::DeadlineKind kind = planner::ParseDeadlineKind(deadline_kind);
            const Clock::time_point deadline =
                deadline_s ? Clock::now() + Microseconds(*deadline_s, "deadline_s")
                           : Clock::time_point::max();
            return self.Released([&](Planner& p) { return p.Optimize(deadline, kind); });
          },
          py::arg("deadline_s") = py::none(), py::arg("deadline_kind") = "hard",
          "Moves the plan to the newest observation, within deadline_s seconds from now when "
          "given; False when the deadline left no time (the step is deferred). deadline_kind "
          "'hard' stops a model call that would end late, 'start-only' lets it run to its end.")
      .def(
          "action",
          [](PyPlanner& self) { return ToNumpy(self.Held([](Planner& p) { return p.Action(); })); },
          "The action for the newest observed step.")
      .def_property_readonly(
          "plan", [](PyPlanner& self) { return self.Held([](Planner& p) { return p.plan(); }); })
      .def_property_readonly(
          "stats",
          [](PyPlanner& self) { return self.Held([](Planner& p) { return p.last_step(); }); })
      .def_property_readonly(
          "options",
          [](PyPlanner& self) { return self.Held([](Planner& p) { return p.options(); }); })
      .def_property_readonly(
          "task", [](PyPlanner& self) { return self.Held([](Planner& p) { return p.task(); }); })
      .def_property_readonly(
          "observation_dim",
          [](PyPlanner& self) { return self.Held([](Planner& p) { return p.observation_dim(); }); })
      .def_property_readonly(
          "action_dim",
          [](PyPlanner& self) { return self.Held([](Planner& p) { return p.action_dim(); }); })
      .def_property_readonly(
          "action_repeat",
          [](PyPlanner& self) { return self.Held([](Planner& p) { return p.action_repeat(); }); })
      .def_property_readonly(
          "steps", [](PyPlanner& self) { return self.Held([](Planner& p) { return p.steps(); }); });

  py::class_<PyAsyncPlanner>(module, "AsyncPlanner",
                             "A Planner on a planning thread of its own (async_planner.h).")
      .def(py::init([](PyPlanner& planner, double max_wait_s, double period_s, double margin_s,
                       const std::string& deadline_kind) {
             planner::AsyncPlannerOptions options;
             options.max_wait = Microseconds(max_wait_s, "max_wait_s");
             options.period = Microseconds(period_s, "period_s");
             options.margin = Microseconds(margin_s, "margin_s");
             options.deadline_kind = planner::ParseDeadlineKind(deadline_kind);
             return std::make_unique<PyAsyncPlanner>(
                 std::make_unique<AsyncPlanner>(planner.Take(), options), "");
           }),
           py::arg("planner"), py::arg("max_wait_s") = 0.01, py::arg("period_s") = 0.0,
           py::arg("margin_s") = 0.0005, py::arg("deadline_kind") = "start-only",
           "Takes the planner over; Step waits at most max_wait_s for a fresh plan.")
      .def(
          "reset",
          [](PyAsyncPlanner& self, const py::handle& observation) {
            const Eigen::VectorXd checked = Observation(self, observation);
            self.Released([&](AsyncPlanner& a) { a.Reset(checked); });
          },
          py::arg("observation"))
      .def(
          "step",
          [](PyAsyncPlanner& self, const py::handle& observation) {
            const Eigen::VectorXd checked = Observation(self, observation);
            return ToNumpy(self.Released([&](AsyncPlanner& a) { return a.Step(checked); }));
          },
          py::arg("observation"), "One control step: the action to apply now.")
      .def_property_readonly(
          "stats",
          [](PyAsyncPlanner& self) { return self.Held([](AsyncPlanner& a) { return a.stats(); }); })
      .def_property_readonly(
          "observation_dim",
          [](PyAsyncPlanner& self) {
            return self.Held([](AsyncPlanner& a) { return a.observation_dim(); });
          })
      .def_property_readonly("action_dim",
                             [](PyAsyncPlanner& self) {
                               return self.Held([](AsyncPlanner& a) { return a.action_dim(); });
                             })
      .def_property_readonly("action_repeat", [](PyAsyncPlanner& self) {
        return self.Held([](AsyncPlanner& a) { return a.action_repeat(); });
      });
}

}  // namespace dfmpc::python
