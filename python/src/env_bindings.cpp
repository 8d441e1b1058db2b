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

namespace py = pybind11;

namespace dfmpc::python {
namespace {

// One episode after another of a task; reset(seed=None) continues the seed
// sequence (0, 1, 2, ... from the last seed given), as gymnasium's does
// with its own generator.
class PyEnv {
 public:
  explicit PyEnv(std::unique_ptr<envs::Env> env) : env_(std::move(env)) {}

  py::tuple Reset(std::optional<std::uint64_t> seed) {
    next_seed_ = seed.value_or(next_seed_);
    const Eigen::VectorXd observation = env_->Reset(next_seed_);
    py::dict info;
    info["seed"] = next_seed_++;
    AddSuccess(info);
    return py::make_tuple(ToNumpy(observation), info);
  }

  py::tuple Step(const py::handle& action) {
    const Eigen::VectorXd checked = ToVector(action, env_->action_spec().size(), "action");
    envs::StepResult result;
    {
      py::gil_scoped_release release;
      result = env_->Step(checked);
    }
    py::dict info;
    info["step"] = env_->step_count();
    AddSuccess(info);
    return py::make_tuple(ToNumpy(result.observation), result.reward, result.terminated,
                          result.truncated, info);
  }

  py::array_t<std::uint8_t> Render(int width, int height) {
    if (width < 1 || height < 1 || width > 4096 || height > 4096) {
      throw py::value_error("render: width and height must be in [1, 4096], got " +
                            std::to_string(width) + " x " + std::to_string(height));
    }
    std::vector<std::uint8_t> rgb;
    {
      py::gil_scoped_release release;
      rgb = env_->Render(width, height);
    }
    return ImageToNumpy(rgb, width, height);
  }

  envs::Env& env() { return *env_; }

 private:
  void AddSuccess(py::dict& info) const {
    if (env_->has_success_metric()) info["is_success"] = env_->IsSuccess();
  }

  std::unique_ptr<envs::Env> env_;
  std::uint64_t next_seed_ = 0;
};

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
      const auto bounds = value.cast<std::vector<double>>();
      if (bounds.size() != 2) {
        throw py::value_error("perturbation " + name + ": a range is (low, high)");
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
      .def("reset", &PyEnv::Reset, py::arg("seed") = py::none(),
           "Starts an episode; returns (observation, info).")
      .def("step", &PyEnv::Step, py::arg("action"),
           "Applies an action for one control step; returns (observation, reward, "
           "terminated, truncated, info).")
      .def("render", &PyEnv::Render, py::arg("width") = 320, py::arg("height") = 240,
           "The current state from the task's camera: a [height, width, 3] uint8 array.")
      .def_property_readonly("name", [](PyEnv& e) { return e.env().name(); })
      .def_property_readonly("observation_low",
                             [](PyEnv& e) { return ToNumpy(e.env().observation_spec().lower); })
      .def_property_readonly("observation_high",
                             [](PyEnv& e) { return ToNumpy(e.env().observation_spec().upper); })
      .def_property_readonly("action_low",
                             [](PyEnv& e) { return ToNumpy(e.env().action_spec().lower); })
      .def_property_readonly("action_high",
                             [](PyEnv& e) { return ToNumpy(e.env().action_spec().upper); })
      .def_property_readonly("action_repeat", [](PyEnv& e) { return e.env().action_repeat(); })
      .def_property_readonly("episode_length", [](PyEnv& e) { return e.env().episode_length(); })
      .def_property_readonly("control_timestep",
                             [](PyEnv& e) { return e.env().control_timestep(); })
      .def_property_readonly("step_count", [](PyEnv& e) { return e.env().step_count(); })
      .def_property_readonly("perturbation", [](PyEnv& e) {
        return envs::FormatPerturbation(e.env().perturbation());
      });
  module.def(
      "make_env",
      [](const std::string& task, int action_repeat, int episode_physics_steps,
         const py::kwargs& perturbations) {
        envs::EnvOptions options;
        options.action_repeat = action_repeat;
        options.episode_physics_steps = episode_physics_steps;
        options.perturbation = envs::ParsePerturbation(PerturbationText(perturbations));
        return PyEnv(envs::MakeEnv(task, options));
      },
      py::arg("task"), py::arg("action_repeat") = 1,
      py::arg("episode_physics_steps") = envs::kEpisodePhysicsSteps,
      "A task's environment. Keyword perturbations (obs_noise, obs_noise_rel, delay, gain, "
      "mass, damping, friction) take a fixed value or a (low, high) range drawn per episode.");
}

}  // namespace dfmpc::python
