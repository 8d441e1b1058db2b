// Datasets from Python: dfmpc.read_dataset, dfmpc.write_dataset and
// dfmpc.collect. The C++ reader and writer enforce the format
// (envs/DATASET.md); episodes from Python are checked here first, so a
// wrong shape or a NaN is a ValueError naming the episode and the array.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "dfmpc/envs/collect.h"
#include "dfmpc/envs/dataset.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/perturbation.h"
#include "progress.h"

namespace py = pybind11;

namespace dfmpc::python {
namespace {

template <typename T>
py::array_t<T> Array(const std::vector<py::ssize_t>& shape, const T* data) {
  py::array_t<T> out(shape);
  py::ssize_t size = 1;
  for (py::ssize_t d : shape) size *= d;
  std::copy(data, data + size, out.mutable_data());
  return out;
}

py::array_t<bool> Flags(const std::vector<std::uint8_t>& flags) {
  py::array_t<bool> out(static_cast<py::ssize_t>(flags.size()));
  std::transform(flags.begin(), flags.end(), out.mutable_data(),
                 [](std::uint8_t flag) { return flag != 0; });
  return out;
}

py::dict InfoDict(const envs::DatasetInfo& info) {
  py::dict out;
  out["task"] = info.task;
  out["policy"] = info.policy;
  out["seed"] = info.seed;
  out["observation_size"] = info.observation_size;
  out["action_size"] = info.action_size;
  out["action_repeat"] = info.action_repeat;
  out["control_timestep"] = info.control_timestep;
  out["episode_physics_steps"] = info.episode_physics_steps;
  out["frame_width"] = info.frame_width;
  out["frame_height"] = info.frame_height;
  out["perturbation"] = envs::FormatPerturbation(info.perturbation);
  out["library_version"] = info.library_version;
  out["format_version"] = info.format_version;
  return out;
}

py::dict ReadDataset(const std::string& path, bool frames) {
  envs::Dataset data;
  {
    py::gil_scoped_release release;
    data = envs::ReadDataset(path, frames);
  }
  const py::ssize_t n = data.num_steps(), e = data.num_episodes();
  const py::ssize_t obs = data.info.observation_size, act = data.info.action_size;
  py::dict out;
  out["info"] = InfoDict(data.info);
  out["observations"] = Array<float>({n, obs}, data.observations.data());
  out["next_observations"] = Array<float>({n, obs}, data.next_observations.data());
  out["actions"] = Array<float>({n, act}, data.actions.data());
  out["rewards"] = Array<float>({n}, data.rewards.data());
  out["terminals"] = Flags(data.terminals);
  out["timeouts"] = Flags(data.timeouts);
  out["episode_starts"] = Array<std::int64_t>({e}, data.episode_starts.data());
  out["episode_lengths"] = Array<std::int64_t>({e}, data.episode_lengths.data());
  out["episode_returns"] = Array<double>({e}, data.episode_returns.data());
  out["episode_success"] = Flags(data.episode_success);
  py::list perturbations;
  for (const envs::Perturbation& p : data.episode_perturbations) {
    perturbations.append(envs::FormatPerturbation(p));
  }
  out["episode_perturbations"] = perturbations;
  if (frames && data.info.frame_width > 0) {
    out["frames"] = Array<std::uint8_t>({n, data.info.frame_height, data.info.frame_width, 3},
                                        data.frames.data());
  } else {
    out["frames"] = py::none();
  }
  return out;
}

// Episode `index` of write_dataset's list, checked against the sizes.
envs::Episode ToEpisode(const py::handle& item, int index, int obs, int act,
                        const envs::DatasetInfo& info) {
  const std::string name = "episode " + std::to_string(index);
  if (!py::isinstance<py::dict>(item)) throw py::value_error(name + " must be a dict");
  const py::dict episode = py::reinterpret_borrow<py::dict>(item);
  for (const char* key : {"observations", "actions", "rewards"}) {
    if (!episode.contains(key)) throw py::value_error(name + " has no '" + key + "'");
  }
  envs::Episode out;
  out.observations = ToMatrix(episode["observations"], -1, obs, (name + " observations").c_str());
  const Eigen::Index steps = out.observations.rows() - 1;
  if (steps < 1) throw py::value_error(name + " observations need at least 2 rows (o_0 .. o_T)");
  out.actions = ToMatrix(episode["actions"], steps, act, (name + " actions").c_str());
  out.rewards = ToVector(episode["rewards"], steps, (name + " rewards").c_str());
  if (!out.observations.allFinite() || !out.actions.allFinite() || !out.rewards.allFinite()) {
    throw py::value_error(name + " holds NaN or infinite values");
  }
  out.terminated = episode.contains("terminated") && episode["terminated"].cast<bool>();
  out.truncated = !episode.contains("truncated") || episode["truncated"].cast<bool>();
  out.success = episode.contains("success") && episode["success"].cast<bool>();
  if (info.frame_width > 0) {
    if (!episode.contains("frames")) throw py::value_error(name + " has no 'frames'");
    const auto frames = py::array_t<std::uint8_t, py::array::c_style>::ensure(episode["frames"]);
    if (!frames || frames.ndim() != 4 || frames.shape(0) != steps ||
        frames.shape(1) != info.frame_height || frames.shape(2) != info.frame_width ||
        frames.shape(3) != 3) {
      throw py::value_error(name + " frames must be uint8 of shape (" + std::to_string(steps) +
                            "," + std::to_string(info.frame_height) + "," +
                            std::to_string(info.frame_width) + ",3)");
    }
    const std::size_t bytes = static_cast<std::size_t>(info.frame_height) * info.frame_width * 3;
    for (Eigen::Index t = 0; t < steps; ++t) {
      const std::uint8_t* first = frames.data() + t * bytes;
      out.frames.emplace_back(first, first + bytes);
    }
  }
  return out;
}

void WriteDataset(const std::string& path, const py::list& episodes, const std::string& task,
                  const std::string& policy, std::uint64_t seed, int action_repeat,
                  double control_timestep, int episode_physics_steps, int frame_width,
                  int frame_height) {
  if (episodes.empty()) throw py::value_error("write_dataset: no episodes");
  if (task.empty()) throw py::value_error("write_dataset: the task needs a name");
  if (!(control_timestep > 0.0)) {
    throw py::value_error("write_dataset: control_timestep must be positive seconds");
  }
  if (!py::isinstance<py::dict>(episodes[0])) throw py::value_error("episode 0 must be a dict");
  const py::dict first = episodes[0].cast<py::dict>();
  if (!first.contains("observations") || !first.contains("actions")) {
    throw py::value_error("episode 0 needs 'observations' and 'actions'");
  }
  const auto observations = py::array::ensure(first["observations"]);
  const auto actions = py::array::ensure(first["actions"]);
  if (!observations || observations.ndim() != 2 || !actions || actions.ndim() != 2) {
    throw py::value_error("episode 0: observations and actions must be 2-d arrays");
  }
  envs::DatasetInfo info;
  info.task = task;
  info.policy = policy;
  info.seed = seed;
  info.observation_size = static_cast<int>(observations.shape(1));
  info.action_size = static_cast<int>(actions.shape(1));
  info.action_repeat = action_repeat;
  info.control_timestep = control_timestep;
  info.episode_physics_steps = episode_physics_steps;
  info.frame_width = frame_width;
  info.frame_height = frame_height;
  std::vector<envs::Episode> checked;
  for (size_t i = 0; i < episodes.size(); ++i) {
    checked.push_back(
        ToEpisode(episodes[i], static_cast<int>(i), info.observation_size, info.action_size, info));
  }
  py::gil_scoped_release release;
  envs::DatasetWriter writer(path, info);
  for (const envs::Episode& episode : checked) writer.Append(episode);
  writer.Commit();
}

py::dict Collect(const std::string& task, const std::string& out, int episodes,
                 const std::string& policy, std::uint64_t seed, int action_repeat,
                 int episode_physics_steps, int frame_width, int frame_height, int threads,
                 const std::string& perturbation, const py::object& progress) {
  envs::CollectOptions options;
  options.task = task;
  options.episodes = episodes;
  options.policy = policy;
  options.seed = seed;
  options.frame_width = frame_width;
  options.frame_height = frame_height;
  options.threads = threads;
  options.env.action_repeat = action_repeat;
  options.env.episode_physics_steps = episode_physics_steps;
  options.env.perturbation = envs::ParsePerturbation(perturbation);
  envs::CollectSummary summary;
  {
    py::gil_scoped_release release;
    summary = envs::CollectDataset(out, options, [&progress](long long steps, int episode) {
      ReportProgress(progress, steps, episode);
    });
  }
  py::dict result;
  result["episodes"] = summary.episodes;
  result["steps"] = summary.steps;
  result["mean_return"] = summary.mean_return;
  return result;
}

}  // namespace

void BindData(py::module_& module) {
  module.def("read_dataset", &ReadDataset, py::arg("path"), py::arg("frames") = true,
             "Reads a dataset file: a dict of numpy arrays (observations, next_observations, "
             "actions, rewards, terminals, timeouts, episode_*; frames or None) and 'info'.");
  module.def("write_dataset", &WriteDataset, py::arg("path"), py::arg("episodes"), py::arg("task"),
             py::arg("policy") = "python", py::arg("seed") = 0, py::arg("action_repeat") = 1,
             py::arg("control_timestep"),
             py::arg("episode_physics_steps") = envs::kEpisodePhysicsSteps,
             py::arg("frame_width") = 0, py::arg("frame_height") = 0,
             "Writes episodes (dicts of observations [T+1, o], actions [T, a], rewards [T]; "
             "optional terminated, truncated, success, frames [T, H, W, 3] uint8) as a dataset "
             "file, whole or not at all.");
  module.def("collect", &Collect, py::arg("task"), py::arg("out"), py::arg("episodes") = 10,
             py::arg("policy") = "mixed", py::arg("seed") = 0, py::arg("action_repeat") = 0,
             py::arg("episode_physics_steps") = 0,
             py::arg("frame_width") = 0, py::arg("frame_height") = 0, py::arg("threads") = 1,
             py::arg("perturbation") = "", py::arg("progress") = py::none(),
             "Rolls a baseline policy (random, oracle, mixed) out on a task (a built-in name or "
             "a task folder) and writes a dataset, as `dfmpc collect` (action_repeat and "
             "episode_physics_steps 0: the task file's); progress(steps, episode) is called after every control step. "
             "Returns episodes, steps and mean_return.");
}

}  // namespace dfmpc::python
