#include "rollout_throughput.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>

#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/forward_graphs.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/open_loop_rollout.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::device_check {

RolloutResult MeasureRollout(const RolloutRequest& request) {
  worldmodel::VideoModel model =
      worldmodel::LoadVideoModel(request.model, {}, worldmodel::ParseDevice(request.device));
  worldmodel::Checkpoint& world = model.world;
  const worldmodel::TokenLayout& layout = world.info.layout;
  const worldmodel::NoiseSchedule schedule(world.info.num_timesteps, world.info.beta);
  worldmodel::RolloutOptions options;
  options.prediction = world.info.prediction;
  options.cuda_graphs = request.cuda_graphs;
  worldmodel::OpenLoopRollout rollout(*world.model, schedule, layout.action_dim, options);

  at::Generator generator = at::detail::createCPUGenerator(0);
  const at::Tensor context =
      at::randn({request.context, world.info.config.token_dim}, generator, at::kFloat);
  const at::Tensor actions =
      at::randn({request.horizon, layout.action_dim}, generator, at::kFloat);
  const c10::InferenceMode inference;
  auto generate = [&] {
    rollout.Reset(context);
    for (int t = 0; t < request.horizon; t += options.chunk) {
      const int n = std::min(options.chunk, request.horizon - t);
      const at::Tensor tokens = rollout.Next(actions.narrow(0, t, n));
      const at::Tensor latents = world.normalizer.Denormalize(tokens).narrow(
          1, layout.observation_offset(), layout.observation_dim);
      model.tokenizer.model->DecodeToBytes(latents);  // frames on the CPU: synchronizes
    }
  };
  // Twice: shapes are captured the second time they are seen, and the first
  // chunks of a rollout attend to a history that is still growing.
  generate();
  generate();
  const long long replays_before =
      rollout.graph_stats() != nullptr ? rollout.graph_stats()->replayed : 0;
  const auto start = std::chrono::steady_clock::now();
  generate();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RolloutResult result;
  result.frames_per_second = request.horizon / seconds;
  if (rollout.graph_stats() != nullptr) {
    result.graph_replays = rollout.graph_stats()->replayed - replays_before;
  }
  return result;
}

}  // namespace dfmpc::device_check
