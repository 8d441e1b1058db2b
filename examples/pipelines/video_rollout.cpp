#include "video_rollout.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/observation_chain.h"
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::pipelines {
namespace {

constexpr int64_t kCodecBatch = 256;

at::Tensor EncodeFrames(worldmodel::FrameAutoencoderImpl& tokenizer, const at::Tensor& frames) {
  std::vector<at::Tensor> latents;
  for (int64_t begin = 0; begin < frames.size(0); begin += kCodecBatch) {
    latents.push_back(
        tokenizer.Encode(frames.narrow(0, begin, std::min(kCodecBatch, frames.size(0) - begin))));
  }
  return at::cat(latents).cpu();
}

// Normalized tokens [T, d] of latents and actions in `layout`.
at::Tensor NormalizedTokens(const worldmodel::TokenLayout& layout,
                            const worldmodel::Normalizer& normalizer, const RealTrajectory& real) {
  return normalizer.Normalize(worldmodel::EpisodeTokens(layout, real.latents, real.actions));
}

}  // namespace

std::string ShippedVideoModelPath(const std::string& task) {
  return std::string(DFMPC_SHIPPED_MODELS_DIR) + "/" + task + "_video.pt";
}

at::Tensor StackFrames(const std::vector<std::vector<std::uint8_t>>& frames, int width,
                       int height) {
  at::Tensor stacked =
      at::empty({static_cast<int64_t>(frames.size()), height, width, 3}, at::kByte);
  for (std::size_t t = 0; t < frames.size(); ++t) {
    std::copy(frames[t].begin(), frames[t].end(),
              stacked[static_cast<int64_t>(t)].data_ptr<std::uint8_t>());
  }
  return stacked;
}

RealTrajectory EncodeTrajectory(worldmodel::VideoModel& model, const at::Tensor& frames,
                                const envs::RowMatrixXf& actions) {
  c10::InferenceMode inference;
  RealTrajectory real;
  real.latents = EncodeFrames(*model.tokenizer.model, frames);
  real.actions = at::from_blob(const_cast<float*>(actions.data()), {actions.rows(), actions.cols()},
                               at::kFloat)
                     .clone();
  return real;
}

at::Tensor DecodeLatents(worldmodel::VideoModel& model, const at::Tensor& latents) {
  c10::InferenceMode inference;
  std::vector<at::Tensor> frames;
  for (int64_t begin = 0; begin < latents.size(0); begin += kCodecBatch) {
    frames.push_back(model.tokenizer.model->DecodeToBytes(
        latents.narrow(0, begin, std::min(kCodecBatch, latents.size(0) - begin))));
  }
  return at::cat(frames);
}

ModelPrediction PredictWithDiffusion(worldmodel::VideoModel& model, const RealTrajectory& real,
                                     int context, const worldmodel::RolloutOptions& options,
                                     const std::function<void(int64_t)>& on_chunk) {
  worldmodel::Checkpoint& world = model.world;
  const worldmodel::TokenLayout& layout = world.info.layout;
  const worldmodel::NoiseSchedule schedule(world.info.num_timesteps, world.info.beta);
  std::optional<worldmodel::ObservationChain> chain;
  worldmodel::RolloutOptions rollout_options = options;
  rollout_options.prediction = world.info.prediction;
  if (layout.observation_deltas) {
    chain.emplace(layout, world.normalizer);
    rollout_options.chain = &*chain;
  }
  worldmodel::OpenLoopRollout rollout(*world.model, schedule, layout.action_dim, rollout_options);
  const at::Tensor tokens = NormalizedTokens(layout, world.normalizer, real);
  const int64_t horizon = tokens.size(0) - context;

  ModelPrediction prediction;
  std::vector<at::Tensor> latents, frames;
  const auto start = std::chrono::steady_clock::now();
  rollout.Reset(tokens.narrow(0, 0, context));
  for (int64_t t = context; t < tokens.size(0); t += rollout_options.chunk) {
    const int64_t n = std::min<int64_t>(rollout_options.chunk, tokens.size(0) - t);
    const at::Tensor generated =
        rollout.Next(tokens.narrow(0, t, n).narrow(1, 0, layout.action_dim));
    const at::Tensor z = world.normalizer.Denormalize(generated).narrow(
        1, layout.observation_offset(), layout.observation_dim);
    frames.push_back(DecodeLatents(model, z));
    latents.push_back(z.cpu());
    prediction.generated.push_back(rollout.generated());
    prediction.state_bytes.push_back(rollout.StateBytes());
    prediction.history_tokens.push_back(rollout.history_size());
    if (on_chunk) on_chunk(rollout.generated());
  }
  prediction.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  prediction.latents = at::cat(latents);
  prediction.frames = at::cat(frames);
  if (prediction.latents.size(0) != horizon) throw std::logic_error("rollout length mismatch");
  return prediction;
}

ModelPrediction PredictWithMlp(worldmodel::MlpCheckpoint& mlp, worldmodel::VideoModel& model,
                               const RealTrajectory& real, int context) {
  const worldmodel::TokenLayout& layout = mlp.info.config.layout;
  const int latent = model.tokenizer.info.config.latent_dim;
  if (mlp.info.task != model.world.info.task || layout.observation_dim != latent ||
      layout.action_dim != model.world.info.layout.action_dim) {
    throw std::invalid_argument(
        "the MLP (" + mlp.info.task + ", " + std::to_string(layout.observation_dim) +
        " observation features) is not for this video model's latents (" + model.world.info.task +
        ", " + std::to_string(latent) + "): train it with `dfmpc train-mlp --tokenizer`");
  }
  c10::InferenceMode inference;
  const auto start = std::chrono::steady_clock::now();
  const at::Tensor tokens = NormalizedTokens(layout, mlp.normalizer, real);
  const at::Tensor predicted = mlp.model->Rollout(
      tokens[context - 1].unsqueeze(0), tokens.narrow(0, context, tokens.size(0) - context)
                                            .narrow(1, 0, layout.action_dim)
                                            .unsqueeze(0));
  ModelPrediction prediction;
  prediction.latents = mlp.normalizer.Denormalize(predicted[0])
                           .narrow(1, layout.observation_offset(), layout.observation_dim);
  prediction.frames = DecodeLatents(model, prediction.latents);
  prediction.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return prediction;
}

}  // namespace dfmpc::pipelines
