// dfmpc bench rollout: open-loop video rollout speed of a video model, in
// frames per second with decoding, without a cache (the reference) and with
// the exact KV cache, side by side in one run for several context lengths.
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/video_model.h"
#include "output_path.h"
#include "rollout_truth.h"
#include "statistics.h"
#include "table.h"
#include "video_rollout.h"

namespace dfmpc::cli {
namespace {

struct BenchRolloutOptions {
  std::string model;
  std::string task = "pendulum_swingup";
  std::vector<int> contexts = {16, 64, 256};
  int horizon = 64;
  worldmodel::RolloutOptions rollout;
  int repeats = 3;
  int threads = 1;
  std::string device = "cpu";
  std::string csv = "bench_rollout.csv";
};

void RunBenchRollout(BenchRolloutOptions o) {
  if (o.repeats < 1 || o.threads < 1) {
    throw std::invalid_argument("--repeats and --threads must be >= 1");
  }
  if (o.horizon < 1) throw std::invalid_argument("--horizon must be >= 1");
  at::set_num_threads(o.threads);
  if (o.model.empty()) o.model = pipelines::ShippedVideoModelPath(o.task);
  worldmodel::VideoModel model =
      worldmodel::LoadVideoModel(o.model, {o.task, 0}, worldmodel::ParseDevice(o.device));
  o.rollout.num_levels = worldmodel::SamplingLevels(model.world.info, o.rollout.num_levels);
  const worldmodel::FrameTokenizerConfig& frames = model.tokenizer.info.config;
  const int longest = *std::max_element(o.contexts.begin(), o.contexts.end());
  if (*std::min_element(o.contexts.begin(), o.contexts.end()) < 1) {
    throw std::invalid_argument("context lengths must be >= 1");
  }
  pipelines::TruthRequest request{o.task,
                                  model.world.info.action_repeat,
                                  frames.width,
                                  frames.height,
                                  longest + o.horizon,
                                  "mixed",
                                  0};
  const pipelines::TruthTrajectory truth = pipelines::MakeTruth(request);
  const pipelines::RealTrajectory all = pipelines::EncodeTrajectory(
      model, pipelines::StackFrames(truth.frames, frames.width, frames.height), truth.actions);

  std::fprintf(stderr,
               "bench rollout: %s, %dx%d frames, H %d, chunk %d, K %d, %d thread(s), median of "
               "%d\n",
               o.model.c_str(), frames.width, frames.height, o.horizon, o.rollout.chunk,
               o.rollout.num_levels, o.threads, o.repeats);
  Table table({"S", "cache", "history_tokens", "frames_per_s", "speedup"});
  for (int s : o.contexts) {
    // The last S + H steps of the trajectory: S real frames, then H to generate.
    const int64_t first = longest - s;
    const pipelines::RealTrajectory real{all.latents.narrow(0, first, s + o.horizon),
                                         all.actions.narrow(0, first, s + o.horizon - 1)};
    double none_fps = 0.0;
    for (const std::string cache : {"none", "exact"}) {
      worldmodel::RolloutOptions options = o.rollout;
      options.cache_mode = worldmodel::ParseCacheMode(cache);
      pipelines::ModelPrediction prediction =
          pipelines::PredictWithDiffusion(model, real, s, options);  // warm-up
      std::vector<double> fps;
      for (int r = 0; r < o.repeats; ++r) {
        prediction = pipelines::PredictWithDiffusion(model, real, s, options);
        fps.push_back(o.horizon / prediction.seconds);
      }
      const double median = Median(fps);
      if (cache == "none") none_fps = median;
      table.AddRow({std::to_string(s), cache, std::to_string(prediction.history_tokens.front()),
                    FormatFixed(median, 1), FormatFixed(median / none_fps, 2)});
      std::fprintf(stderr, "  S=%d %s done\n", s, cache.c_str());
    }
  }
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

}  // namespace

void AddBenchRolloutCommand(CLI::App& bench) {
  auto o = std::make_shared<BenchRolloutOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "rollout", "Video rollout frames per second (decoding included): no cache vs exact cache");
  cmd->add_option("--model", o->model, "video model (default: the task's shipped TASK_video.pt)");
  cmd->add_option("--task", o->task, "task of the model")->capture_default_str();
  cmd->add_option("--contexts", o->contexts, "real context frames S")->capture_default_str();
  cmd->add_option("--horizon", o->horizon, "frames generated per rollout")->capture_default_str();
  cmd->add_option("--chunk", o->rollout.chunk, "frames generated together")->capture_default_str();
  o->rollout.num_levels = 0;
  cmd->add_option("--levels", o->rollout.num_levels, "sampling levels K (0: the model's, a distilled model's K, else 16)")
      ->capture_default_str();
  cmd->add_option("--repeats", o->repeats, "timed runs per cell (median reported)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "intra-op threads")->capture_default_str();
  AddDeviceFlag(*cmd, o->device);
  cmd->add_flag("--no-cuda-graphs{false}", o->rollout.cuda_graphs,
                "on a GPU, run every model call eagerly instead of replaying CUDA graphs");
  cmd->add_option("--csv", o->csv, "CSV output path")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([o] { RunBenchRollout(*o); });
}

}  // namespace dfmpc::cli
