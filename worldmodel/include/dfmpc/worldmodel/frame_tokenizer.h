// The frame tokenizer of video world models: a convolutional autoencoder
// that maps an RGB frame (as datasets store it: height x width x 3 bytes) to
// a small latent vector and back. The diffusion-forcing transformer then
// models sequences of latents exactly as it models state observations
// (video_model.h).
//
// Encoder: four stride-2 convolutions (channels c, 2c, 4c, 4c; SiLU) down to
// (H/16) x (W/16), flattened, then a linear layer to the latent. Decoder:
// the mirror image with transposed convolutions and a sigmoid, so decoded
// pixels lie in [0, 1].
#ifndef DFMPC_WORLDMODEL_FRAME_TOKENIZER_H_
#define DFMPC_WORLDMODEL_FRAME_TOKENIZER_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/optimizer_options.h"

namespace dfmpc::worldmodel {

struct FrameTokenizerConfig {
  int width = 64;   // frame size; both must be positive multiples of 16
  int height = 64;
  int latent_dim = 16;
  int channels = 16;  // c: channels of the first convolution

  // Throws std::invalid_argument naming the first impossible field.
  void Validate() const;
  // Throws std::invalid_argument naming the expected shape unless `frames`
  // is uint8 [N, height, width, 3]: the check of Encode, shared with the
  // trainer.
  void CheckFrames(const at::Tensor& frames) const;
};

class FrameAutoencoderImpl : public torch::nn::Module {
 public:
  // Initial weights are a function of `init_seed` alone; the process-wide
  // random generator is left as it was.
  explicit FrameAutoencoderImpl(const FrameTokenizerConfig& config, uint64_t init_seed = 0);

  const FrameTokenizerConfig& config() const { return config_; }

  // frames: uint8 [N, H, W, 3] (on the CPU or the model's device) -> float
  // [N, latent_dim] on the model's device. Throws std::invalid_argument
  // naming the expected shape for another shape or dtype.
  at::Tensor Encode(const at::Tensor& frames);
  // latents: float [N, latent_dim] (any device) -> float [N, H, W, 3] in
  // [0, 1] on the model's device.
  at::Tensor Decode(const at::Tensor& latents);
  // Decode, rounded to uint8 [N, H, W, 3], on the CPU.
  at::Tensor DecodeToBytes(const at::Tensor& latents);
  // Pixels in [0, 1], [N, 3, H, W], to decoder output of the same layout:
  // what training differentiates.
  at::Tensor Reconstruct(const at::Tensor& pixels);

 private:
  at::Tensor EncodePixels(const at::Tensor& pixels);  // [N, 3, H, W] in [0, 1]
  at::Tensor DecodePixels(const at::Tensor& latents);  // -> [N, 3, H, W]

  FrameTokenizerConfig config_;
  torch::nn::Sequential encoder_{nullptr};
  torch::nn::Sequential decoder_{nullptr};
};

TORCH_MODULE(FrameAutoencoder);

// Converts uint8 [N, H, W, 3] frames to float [N, 3, H, W] in [0, 1].
at::Tensor FramesToPixels(const at::Tensor& frames);
// The inverse, rounded: float [N, 3, H, W] (clamped to [0, 1]) to uint8
// [N, H, W, 3]. Lets the trainer turn the reconstructions it already has
// into frames without decoding twice.
at::Tensor PixelsToFrames(const at::Tensor& pixels);

// The mean of uint8 frames [N, H, W, 3] as pixels [3, H, W] in [0, 1].
at::Tensor MeanFramePixels(const at::Tensor& frames);

// Peak signal-to-noise ratio in dB of uint8 frames [N, H, W, 3] against
// `reference` of the same shape, over all their pixels (peak 255); +inf when
// they are equal.
double FramePsnr(const at::Tensor& frames, const at::Tensor& reference);

// The optimiser's settings (optimizer_options.h; the seed draws the initial
// weights and the batches), then the loss's and the validation's.
struct FrameTrainOptions : OptimizerOptions {
  FrameTrainOptions() {
    steps = 2000;
    batch_size = 64;  // frames
    learning_rate = 2e-3;
    min_learning_rate_ratio = 0.05;
    weight_decay = 0.0;
  }

  // Pixels that differ from the mean training frame (the moving parts: by
  // more than 0.1 in some channel) weigh 1 + this in the loss. Unweighted,
  // a thin pendulum on a static background reconstructs as the background
  // alone: the background's pixels outnumber the pole's a hundredfold.
  double foreground_weight = 20.0;
  int validate_every = 250;

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const;
};

struct FrameTrainLogRow {
  int step = 0;
  double train_loss = 0.0;       // mean pixel MSE since the previous row
  double validation_loss = 0.0;  // pixel MSE on the validation frames
  double validation_psnr = 0.0;  // dB, of the uint8 reconstructions
  double frames_per_second = 0.0;
};

// Trains `model` on uint8 frames [N, H, W, 3] (`train`), validating on
// `validation` (same layout, may hold fewer frames) every validate_every
// steps and at the end. The same weights, data and seed give the same
// result. `on_progress(step, running loss)` runs after every step,
// `on_log(log so far)` after every validation. Throws std::invalid_argument
// for frames of another size than the model's or an empty set. Leaves the
// model in eval mode.
std::vector<FrameTrainLogRow> TrainFrameAutoencoder(
    FrameAutoencoderImpl& model, const at::Tensor& train, const at::Tensor& validation,
    const FrameTrainOptions& options, const std::function<void(int, double)>& on_progress = nullptr,
    const std::function<void(const std::vector<FrameTrainLogRow>&)>& on_log = nullptr);

struct FrameTokenizerInfo : ModelProvenance {
  FrameTokenizerConfig config;
};

struct FrameTokenizerCheckpoint {
  FrameTokenizerInfo info;
  FrameAutoencoder model{nullptr};
};

// Written atomically with a checksum, like every model file (checkpoint.h).
void SaveFrameTokenizer(const std::string& path, const FrameTokenizerInfo& info,
                        FrameAutoencoderImpl& model);

// Throws std::runtime_error naming the file and the problem: missing,
// corrupt, not a frame tokenizer, another format version, or trained for
// another task than `expect.task` (when not empty). Eval mode.
FrameTokenizerCheckpoint LoadFrameTokenizer(const std::string& path,
                                            const CheckpointExpectation& expect = {});

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_FRAME_TOKENIZER_H_
