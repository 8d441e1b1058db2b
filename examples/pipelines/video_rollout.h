// The model side of `dfmpc rollout`: a video model's open-loop prediction of
// the frames after a real context, on the real actions, and the one-step
// latent MLP baseline's, both as latents and as decoded frames.
#ifndef DFMPC_EXAMPLES_PIPELINES_VIDEO_ROLLOUT_H_
#define DFMPC_EXAMPLES_PIPELINES_VIDEO_ROLLOUT_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/open_loop_rollout.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::pipelines {

// examples/models/TASK_video.pt.
std::string ShippedVideoModelPath(const std::string& task);

// uint8 frames [T, H, W, 3] as one tensor (copied).
at::Tensor StackFrames(const std::vector<std::vector<std::uint8_t>>& frames, int width, int height);

// The real trajectory in the model's terms.
struct RealTrajectory {
  at::Tensor latents;  // [T, latent]
  at::Tensor actions;  // [T - 1, action size]
};

RealTrajectory EncodeTrajectory(worldmodel::VideoModel& model, const at::Tensor& frames,
                                const envs::RowMatrixXf& actions);

struct ModelPrediction {
  at::Tensor latents;    // [H, latent]
  at::Tensor frames;     // uint8 [H, height, width, 3]
  double seconds = 0.0;  // generation and decoding, wall time
  // The rollout's kept state after each chunk: bytes and history tokens.
  std::vector<int64_t> generated, state_bytes;
  std::vector<int> history_tokens;
};

// The frames after the first `context` of `real`, generated open-loop on its
// actions. `on_chunk(generated so far)` reports progress.
ModelPrediction PredictWithDiffusion(worldmodel::VideoModel& model, const RealTrajectory& real,
                                     int context, const worldmodel::RolloutOptions& options,
                                     const std::function<void(int64_t)>& on_chunk = nullptr);

// The same frames from the one-step MLP (trained on the same latents with
// `dfmpc train-mlp --tokenizer`), rolled out autoregressively from the last
// context latent. Throws std::invalid_argument when the MLP is for another
// task or latent size.
ModelPrediction PredictWithMlp(worldmodel::MlpCheckpoint& mlp, worldmodel::VideoModel& model,
                               const RealTrajectory& real, int context);

// Decoded frames of latents [N, latent], in batches.
at::Tensor DecodeLatents(worldmodel::VideoModel& model, const at::Tensor& latents);

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_VIDEO_ROLLOUT_H_
