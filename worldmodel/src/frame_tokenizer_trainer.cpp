// Training of the frame autoencoder: pixel MSE, scheduled AdamW, batches
// and validation of uint8 frames.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "scheduled_adamw.h"

namespace dfmpc::worldmodel {
namespace {

// Frames per validation forward pass: bounds the activations' memory.
constexpr int64_t kValidationChunk = 256;
// A pixel belongs to the foreground when some channel differs from the mean
// frame by more than this (pixels in [0, 1]).
constexpr double kForegroundThreshold = 0.1;

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

struct Validation {
  double loss = 0.0;  // pixel MSE
  double psnr = 0.0;  // dB, of the uint8 reconstructions
};

// Leaves the model in training mode.
Validation Score(FrameAutoencoderImpl& model, const at::Tensor& frames) {
  model.eval();
  at::NoGradGuard no_grad;
  double squared_error = 0.0;
  std::vector<at::Tensor> reconstructions;
  const c10::Device device = ModuleDevice(model);
  for (int64_t first = 0; first < frames.size(0); first += kValidationChunk) {
    const at::Tensor pixels = ToDevice(
        FramesToPixels(frames.slice(0, first, std::min(frames.size(0), first + kValidationChunk))),
        device, at::kFloat);
    const at::Tensor reconstructed = model.Reconstruct(pixels);
    squared_error += (reconstructed - pixels).square().sum().item<double>();
    reconstructions.push_back(PixelsToFrames(reconstructed.cpu()));
  }
  model.train();
  return {squared_error / static_cast<double>(frames.numel()),
          FramePsnr(at::cat(reconstructions), frames)};
}

}  // namespace

void FrameTrainOptions::Validate() const {
  OptimizerOptions::Validate("frame training");
  Require(foreground_weight >= 0, "frame training: foreground weight must be >= 0");
  Require(validate_every > 0,
          "frame training: validate_every must be positive, not " + std::to_string(validate_every));
}

std::vector<FrameTrainLogRow> TrainFrameAutoencoder(
    FrameAutoencoderImpl& model, const at::Tensor& train, const at::Tensor& validation,
    const FrameTrainOptions& options, const std::function<void(int, double)>& on_progress,
    const std::function<void(const std::vector<FrameTrainLogRow>&)>& on_log) {
  options.Validate();
  for (const auto& [frames, name] :
       {std::pair{&train, "training"}, std::pair{&validation, "validation"}}) {
    model.config().CheckFrames(*frames);
    Require(frames->size(0) > 0, std::string("frame training: no ") + name + " frames");
  }
  // Trains where the model is; batches are picked on the CPU, so a seed
  // picks the same frames on every device.
  const c10::Device device = ModuleDevice(model);
  at::Generator generator = at::detail::createCPUGenerator(options.seed);
  const at::Tensor mean_frame = MeanFramePixels(train).unsqueeze(0).to(device);
  ScheduledAdamW optimizer(model.parameters(), options);
  using Clock = std::chrono::steady_clock;
  std::vector<FrameTrainLogRow> log;
  double loss_sum = 0.0;  // since the previous row
  int losses = 0;
  double train_seconds = 0.0;  // since the previous row, validation excluded
  model.train();
  for (int step = 1; step <= options.steps; ++step) {
    const Clock::time_point start = Clock::now();
    const at::Tensor loss = optimizer.Step(step - 1, [&] {
      const at::Tensor picks =
          at::randint(train.size(0), {options.batch_size}, generator, at::kLong);
      const at::Tensor pixels =
          ToDevice(FramesToPixels(train.index_select(0, picks)), device, at::kFloat);
      const at::Tensor foreground =
          (pixels - mean_frame).abs().amax(1, /*keepdim=*/true).gt(kForegroundThreshold);
      const at::Tensor weight = 1.0 + options.foreground_weight * foreground.to(at::kFloat);
      return (weight * (model.Reconstruct(pixels) - pixels).square()).mean() / weight.mean();
    });
    loss_sum += loss.item<double>();
    ++losses;
    train_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (on_progress) on_progress(step, loss_sum / losses);

    if (step % options.validate_every != 0 && step != options.steps) continue;
    const Validation validated = Score(model, validation);
    log.push_back({step, loss_sum / losses, validated.loss, validated.psnr,
                   losses * options.batch_size / std::max(train_seconds, 1e-9)});
    loss_sum = 0.0;
    losses = 0;
    train_seconds = 0.0;
    if (on_log) on_log(log);
  }
  model.eval();
  return log;
}

}  // namespace dfmpc::worldmodel
