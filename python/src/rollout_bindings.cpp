// dfmpc.rollout: open-loop video prediction with a video world model, as
// `dfmpc rollout` runs it, returning the true and the predicted frames.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>

#include "bindings.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/video_model.h"
#include "progress.h"
#include "rollout_truth.h"
#include "video_rollout.h"

namespace py = pybind11;

namespace dfmpc::python {
namespace {

// uint8 frames [N, H, W, 3] (any device) as a numpy array.
py::array_t<std::uint8_t> FramesToNumpy(const at::Tensor& frames) {
  const at::Tensor host = frames.to(at::kCPU, at::kByte).contiguous();
  py::array_t<std::uint8_t> out({host.size(0), host.size(1), host.size(2), host.size(3)});
  std::copy(host.data_ptr<std::uint8_t>(), host.data_ptr<std::uint8_t>() + host.numel(),
            out.mutable_data());
  return out;
}

py::dict Rollout(std::string model_path, const std::string& task, const std::string& actions,
                 std::uint64_t seed, int context, int horizon, const std::string& cache,
                 const std::string& device, int threads, const py::kwargs& keywords) {
  if (context < 1 || horizon < 1) {
    throw py::value_error("rollout: context and horizon must be >= 1, got " +
                          std::to_string(context) + " and " + std::to_string(horizon));
  }
  if (threads < 0) throw py::value_error("threads must be >= 0 (0: leave LibTorch's setting)");
  worldmodel::RolloutOptions options;
  py::object object = py::cast(options);
  for (const auto& [key, value] : keywords) {
    const std::string name = py::str(key);
    if (name.rfind("_", 0) == 0 || !py::hasattr(object, name.c_str())) {
      throw py::type_error("unknown rollout option '" + name + "'");
    }
    py::setattr(object, name.c_str(), value);
  }
  options = object.cast<worldmodel::RolloutOptions>();
  options.cache_mode = worldmodel::ParseCacheMode(cache);
  if (model_path.empty()) model_path = pipelines::ShippedVideoModelPath(task);

  py::gil_scoped_release release;
  if (threads > 0) at::set_num_threads(threads);
  worldmodel::VideoModel model =
      worldmodel::LoadVideoModel(model_path, {task, 0}, worldmodel::ParseDevice(device));
  // A distilled model samples at its own K unless num_levels is given.
  options.num_levels = worldmodel::SamplingLevels(
      model.world.info, keywords.contains("num_levels") ? options.num_levels : 0);
  const worldmodel::FrameTokenizerConfig& frames = model.tokenizer.info.config;
  pipelines::TruthRequest request;
  request.task = model.world.info.task;
  request.action_repeat = model.world.info.action_repeat;
  request.width = frames.width;
  request.height = frames.height;
  request.length = context + horizon;
  request.actions = actions;
  request.seed = seed;
  const pipelines::TruthTrajectory truth = pipelines::MakeTruth(request);
  const at::Tensor truth_frames = pipelines::StackFrames(truth.frames, frames.width, frames.height);
  const pipelines::RealTrajectory real =
      pipelines::EncodeTrajectory(model, truth_frames, truth.actions);
  // Ctrl-C stops a long rollout between chunks.
  const pipelines::ModelPrediction prediction = pipelines::PredictWithDiffusion(
      model, real, context, options, [](int64_t) { StopOnInterrupt(); });

  py::gil_scoped_acquire acquire;
  py::dict out;
  out["task"] = request.task;
  out["context"] = FramesToNumpy(truth_frames.narrow(0, 0, context));
  out["truth"] = FramesToNumpy(truth_frames.narrow(0, context, horizon));
  out["predicted"] = FramesToNumpy(prediction.frames);
  out["seconds"] = prediction.seconds;
  return out;
}

}  // namespace

void BindRollout(py::module_& module) {
  using worldmodel::RolloutOptions;
  py::class_<RolloutOptions>(module, "RolloutOptions",
                             "Options of an open-loop rollout (open_loop_rollout.h).")
      .def(py::init<>())
      .def_readwrite("chunk", &RolloutOptions::chunk)
      .def_readwrite("num_levels", &RolloutOptions::num_levels)
      .def_readwrite("uncertainty", &RolloutOptions::uncertainty)
      .def_readwrite("eta", &RolloutOptions::eta)
      .def_readwrite("history", &RolloutOptions::history)
      .def_readwrite("num_sinks", &RolloutOptions::num_sinks)
      .def_readwrite("seed", &RolloutOptions::seed)
      .def_readwrite("cuda_graphs", &RolloutOptions::cuda_graphs);
  module.def("rollout", &Rollout, py::arg("model") = "", py::arg("task") = "pendulum_swingup",
             py::arg("actions") = "mixed", py::arg("seed") = 0, py::arg("context") = 16,
             py::arg("horizon") = 64, py::arg("cache") = "exact", py::arg("device") = "cpu",
             py::arg("threads") = 0,
             "Open-loop video prediction as `dfmpc rollout`: from `context` real frames of an "
             "episode (actions: random, oracle or mixed in the simulator, a CSV file, or a "
             "dataset episode FILE.h5[:E]), the video model (default: the task's shipped one) "
             "generates the next `horizon` frames on the episode's actions. Keywords set "
             "RolloutOptions fields. Returns context, truth and predicted frames as [N, H, W, 3] "
             "uint8 arrays, and the generation's seconds.");
}

}  // namespace dfmpc::python
