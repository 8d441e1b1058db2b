// dfmpc.make_env: the MuJoCo tasks with a gymnasium-style interface, without
// depending on gymnasium (Debian does not ship it).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "arrays.h"
#include "bindings.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/perturbation.h"
#include "guarded.h"

namespace py = pybind11;

namespace dfmpc::python {
namespace {

// One episode after another of a task; reset(seed=None) continues the seed
// sequence (0, 1, 2, ... from the last seed given), as gymnasium's does
// with its own generator.
struct Episodes {
  std::unique_ptr<envs::Env> env;
  std::uint64_t next_seed = 0;
  std::optional<std::string> render_mode;  // None or "rgb_array", as make_env was given
};
using PyEnv = Guarded<Episodes>;

// Adds is_success where the task defines success. Under the env's turn.
void AddSuccess(const envs::Env& env, py::dict& info) {
  if (env.has_success_metric()) info["is_success"] = env.IsSuccess();
}

py::tuple Reset(PyEnv& self, std::optional<std::uint64_t> seed) {
  std::uint64_t used = 0;
  const Eigen::VectorXd observation = self.Released([&](Episodes& e) {
    used = seed.value_or(e.next_seed);
    e.next_seed = used + 1;
    return e.env->Reset(used);
  });
  py::dict info;
  info["seed"] = used;
  self.Held([&](Episodes& e) { AddSuccess(*e.env, info); });
  return py::make_tuple(ToNumpy(observation), info);
}

py::tuple Step(PyEnv& self, const py::handle& action) {
  const int size = self.Held([](Episodes& e) { return e.env->action_spec().size(); });
  const Eigen::VectorXd checked = ToVector(action, size, "action");
  const envs::StepResult result = self.Released([&](Episodes& e) { return e.env->Step(checked); });
  py::dict info;
  // MuJoCo warned (most often: the simulation went unstable and was reset).
  if (result.simulation_warnings > 0) info["mujoco_warnings"] = result.simulation_warnings;
  self.Held([&](Episodes& e) {
    info["step"] = e.env->step_count();
    AddSuccess(*e.env, info);
  });
  return py::make_tuple(ToNumpy(result.observation), result.reward, result.terminated,
                        result.truncated, info);
}

py::array_t<std::uint8_t> Render(PyEnv& self, int width, int height) {
  if (width < 1 || height < 1 || width > 4096 || height > 4096) {
    throw py::value_error("render: width and height must be in [1, 4096], got " +
                          std::to_string(width) + " x " + std::to_string(height));
  }
  const std::vector<std::uint8_t> rgb =
      self.Released([&](Episodes& e) { return e.env->Render(width, height); });
  return ImageToNumpy(rgb, width, height);
}

// A gymnasium-style Box (dfmpc.spaces) between `low` and `high`.
py::object Box(const Eigen::VectorXd& low, const Eigen::VectorXd& high) {
  return py::module_::import("dfmpc.spaces").attr("Box")(ToNumpy(low), ToNumpy(high));
}

// A property of the environment, read under its turn.
template <typename Read>
auto EnvProperty(Read read) {
  return [read](PyEnv& self) { return self.Held([&](Episodes& e) { return read(*e.env); }); };
}

// The text form of keyword perturbations: a number is a fixed value, a
// (low, high) pair a range drawn per episode.
std::string PerturbationText(const py::kwargs& perturbations) {
  std::string text;
  auto number = [](double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.17g", value);
    return std::string(buffer);
  };
  for (const auto& [key, value] : perturbations) {
    const std::string name = py::str(key);
    std::string range;
    if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
      std::vector<double> bounds;
      try {
        bounds = value.cast<std::vector<double>>();
      } catch (const py::cast_error&) {
      }
      if (bounds.size() != 2) {
        throw py::value_error("perturbation " + name + ": a range is (low, high) numbers");
      }
      range = number(bounds[0]) + ":" + number(bounds[1]);
    } else {
      try {
        range = number(value.cast<double>());
      } catch (const py::cast_error&) {
        throw py::value_error("perturbation " + name + " must be a number or (low, high)");
      }
    }
    text += (text.empty() ? "" : ",") + name + "=" + range;
  }
  return text;
}

}  // namespace

void BindEnvs(py::module_& module) {
  module.def("task_names", &envs::TaskNames, "The built-in task names.");
  py::class_<PyEnv>(module, "Env", "A MuJoCo task with gymnasium's reset/step/render conventions.")
      .def("reset", &Reset, py::arg("seed") = py::none(),
           "Starts an episode; returns (observation, info).")
      .def("step", &Step, py::arg("action"),
           "Applies an action for one control step; returns (observation, reward, "
           "terminated, truncated, info).")
      .def("render", &Render, py::arg("width") = 320, py::arg("height") = 240,
           "The current state from the task's camera: a [height, width, 3] uint8 array "
           "(whatever render_mode is; rendering needs an EGL device).")
      .def(
          "close", [](PyEnv& self) { self.Drop(); },
          "Frees the simulation and its renderer; later calls raise ValueError. Closing twice "
          "is allowed.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyEnv& self, const py::args&) { self.Drop(); })
      .def_property_readonly(
          "render_mode",
          [](PyEnv& self) { return self.Held([](Episodes& e) { return e.render_mode; }); },
          "None or 'rgb_array', as make_env was given.")
      .def_property_readonly(
          "observation_space",
          [](PyEnv& self) {
            const envs::BoxSpec spec =
                self.Held([](Episodes& e) { return e.env->observation_spec(); });
            return Box(spec.lower, spec.upper);
          },
          "A Box (dfmpc.spaces) with the observation's bounds (+-inf where unbounded) and shape.")
      .def_property_readonly(
          "action_space",
          [](PyEnv& self) {
            const envs::BoxSpec spec = self.Held([](Episodes& e) { return e.env->action_spec(); });
            return Box(spec.lower, spec.upper);
          },
          "A Box (dfmpc.spaces) with the action's bounds and shape.")
      .def_property_readonly("name", EnvProperty([](const envs::Env& e) { return e.name(); }))
      .def_property_readonly("observation_low", EnvProperty([](const envs::Env& e) {
                               return ToNumpy(e.observation_spec().lower);
                             }))
      .def_property_readonly("observation_high", EnvProperty([](const envs::Env& e) {
                               return ToNumpy(e.observation_spec().upper);
                             }))
      .def_property_readonly("action_low", EnvProperty([](const envs::Env& e) {
                               return ToNumpy(e.action_spec().lower);
                             }))
      .def_property_readonly("action_high", EnvProperty([](const envs::Env& e) {
                               return ToNumpy(e.action_spec().upper);
                             }))
      .def_property_readonly("action_repeat",
                             EnvProperty([](const envs::Env& e) { return e.action_repeat(); }))
      .def_property_readonly("episode_length",
                             EnvProperty([](const envs::Env& e) { return e.episode_length(); }))
      .def_property_readonly("control_timestep",
                             EnvProperty([](const envs::Env& e) { return e.control_timestep(); }))
      .def_property_readonly("step_count",
                             EnvProperty([](const envs::Env& e) { return e.step_count(); }))
      .def_property_readonly("perturbation", EnvProperty([](const envs::Env& e) {
                               return envs::FormatPerturbation(e.perturbation());
                             }));
  module.def(
      "make_env",
      [](const std::string& task, int action_repeat, int episode_physics_steps,
         const std::optional<std::string>& render_mode, const py::kwargs& perturbations) {
        if (render_mode && *render_mode != "rgb_array") {
          throw py::value_error("render_mode must be None or 'rgb_array', got '" + *render_mode +
                                "'");
        }
        envs::EnvOptions options;
        options.action_repeat = action_repeat;
        options.episode_physics_steps = episode_physics_steps;
        options.perturbation = envs::ParsePerturbation(PerturbationText(perturbations));
        return std::make_unique<PyEnv>(
            std::make_unique<Episodes>(Episodes{envs::MakeEnv(task, options), 0, render_mode}),
            "this Env was closed");
      },
      py::arg("task"), py::arg("action_repeat") = 0, py::arg("episode_physics_steps") = 0,
      py::arg("render_mode") = py::none(),
      "A task's environment: a built-in name or a task folder. action_repeat and "
      "episode_physics_steps 0 take the task file's. render_mode: None or 'rgb_array' "
      "(render() returns the frame either way). Keyword perturbations (obs_noise, "
      "obs_noise_rel, delay, gain, "
      "mass, damping, friction) take a fixed value or a (low, high) range drawn per episode.");
}

}  // namespace dfmpc::python
