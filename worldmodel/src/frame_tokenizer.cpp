#include "dfmpc/worldmodel/frame_tokenizer.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "dfmpc/worldmodel/device.h"
#include "frame_tokenizer_json.h"
#include "model_archive.h"
#include "seeded_init.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kDownsampling = 16;  // four stride-2 convolutions

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// "uint8 [2, 32, 32, 3]": a tensor's dtype and shape for error messages.
std::string Describe(const at::Tensor& t) {
  std::ostringstream out;
  out << t.scalar_type() << " " << t.sizes();
  return out.str();
}

// Seeds the process-wide generator with `seed` until destroyed, then puts
// its previous state back: every layer built meanwhile gets LibTorch's own
// default initialisation (convolutions included), drawn from `seed` alone.
class SeededGlobalGenerator {
 public:
  explicit SeededGlobalGenerator(uint64_t seed) {
    at::Generator global = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(global.mutex());
    global.set_current_seed(seed);
  }

 private:
  GlobalGeneratorRestorer restorer_;  // constructed first: saves the caller's state
};

}  // namespace

void FrameTokenizerConfig::Validate() const {
  for (const auto& [name, size] : {std::pair{"width", width}, std::pair{"height", height}}) {
    Require(size > 0 && size % kDownsampling == 0, std::string("frame tokenizer: ") + name +
                                                       " must be a positive multiple of 16, not " +
                                                       std::to_string(size));
  }
  Require(latent_dim >= 1,
          "frame tokenizer: latent_dim must be >= 1, not " + std::to_string(latent_dim));
  Require(channels >= 1, "frame tokenizer: channels must be >= 1, not " + std::to_string(channels));
}

void FrameTokenizerConfig::CheckFrames(const at::Tensor& frames) const {
  const bool ok = frames.defined() && frames.scalar_type() == at::kByte && frames.dim() == 4 &&
                  frames.size(1) == height && frames.size(2) == width && frames.size(3) == 3;
  Require(ok, "frame tokenizer: frames must be uint8 [N, " + std::to_string(height) + ", " +
                  std::to_string(width) + ", 3], got " +
                  (frames.defined() ? Describe(frames) : std::string("an undefined tensor")));
}

FrameAutoencoderImpl::FrameAutoencoderImpl(const FrameTokenizerConfig& config, uint64_t init_seed)
    : config_(config) {
  config_.Validate();
  const SeededGlobalGenerator seeded(init_seed);
  const int c = config_.channels;
  const std::array<int, 5> channels{3, c, 2 * c, 4 * c, 4 * c};
  const int64_t grid_height = config_.height / kDownsampling;
  const int64_t grid_width = config_.width / kDownsampling;
  const int64_t grid_features = channels.back() * grid_height * grid_width;

  encoder_ = torch::nn::Sequential();
  for (size_t i = 0; i + 1 < channels.size(); ++i) {
    encoder_->push_back(torch::nn::Conv2d(
        torch::nn::Conv2dOptions(channels[i], channels[i + 1], 4).stride(2).padding(1)));
    encoder_->push_back(torch::nn::SiLU());
  }
  encoder_->push_back(torch::nn::Flatten());
  encoder_->push_back(torch::nn::Linear(grid_features, config_.latent_dim));

  decoder_ = torch::nn::Sequential();
  decoder_->push_back(torch::nn::Linear(config_.latent_dim, grid_features));
  decoder_->push_back(torch::nn::SiLU());
  decoder_->push_back(torch::nn::Unflatten(
      torch::nn::UnflattenOptions(1, {channels.back(), grid_height, grid_width})));
  for (size_t i = channels.size() - 1; i > 0; --i) {
    decoder_->push_back(torch::nn::ConvTranspose2d(
        torch::nn::ConvTranspose2dOptions(channels[i], channels[i - 1], 4).stride(2).padding(1)));
    if (i > 1) decoder_->push_back(torch::nn::SiLU());
  }
  decoder_->push_back(torch::nn::Sigmoid());
  register_module("encoder", encoder_);
  register_module("decoder", decoder_);
}

at::Tensor FrameAutoencoderImpl::Encode(const at::Tensor& frames) {
  config_.CheckFrames(frames);
  return EncodePixels(ToDevice(FramesToPixels(frames), ModuleDevice(*this), at::kFloat));
}

at::Tensor FrameAutoencoderImpl::Decode(const at::Tensor& latents) {
  return DecodePixels(latents.to(ModuleDevice(*this))).permute({0, 2, 3, 1}).contiguous();
}

at::Tensor FrameAutoencoderImpl::DecodeToBytes(const at::Tensor& latents) {
  return PixelsToFrames(DecodePixels(latents.to(ModuleDevice(*this)))).cpu();
}

at::Tensor FrameAutoencoderImpl::Reconstruct(const at::Tensor& pixels) {
  return DecodePixels(EncodePixels(pixels));
}

at::Tensor FrameAutoencoderImpl::EncodePixels(const at::Tensor& pixels) {
  Require(pixels.dim() == 4 && pixels.size(1) == 3 && pixels.size(2) == config_.height &&
              pixels.size(3) == config_.width,
          "frame tokenizer: pixels must be [N, 3, " + std::to_string(config_.height) + ", " +
              std::to_string(config_.width) + "], got " + Describe(pixels));
  return encoder_->forward(pixels);
}

at::Tensor FrameAutoencoderImpl::DecodePixels(const at::Tensor& latents) {
  Require(latents.dim() == 2 && latents.size(1) == config_.latent_dim,
          "frame tokenizer: latents must be [N, " + std::to_string(config_.latent_dim) + "], got " +
              Describe(latents));
  return decoder_->forward(latents);
}

at::Tensor FramesToPixels(const at::Tensor& frames) {
  Require(frames.scalar_type() == at::kByte && frames.dim() == 4 && frames.size(3) == 3,
          "FramesToPixels: frames must be uint8 [N, H, W, 3], got " + Describe(frames));
  return frames.permute({0, 3, 1, 2}).to(at::kFloat).div_(255.0);
}

at::Tensor MeanFramePixels(const at::Tensor& frames) {
  Require(frames.scalar_type() == at::kByte && frames.dim() == 4 && frames.size(0) > 0 &&
              frames.size(3) == 3,
          "MeanFramePixels: frames must be uint8 [N > 0, H, W, 3], got " + Describe(frames));
  // Summed in double over the byte values: exact, and no float copy of all frames.
  return frames.sum(0, /*keepdim=*/false, at::kDouble)
      .div(255.0 * static_cast<double>(frames.size(0)))
      .permute({2, 0, 1})
      .to(at::kFloat)
      .contiguous();
}

at::Tensor PixelsToFrames(const at::Tensor& pixels) {
  Require(pixels.dim() == 4 && pixels.size(1) == 3,
          "PixelsToFrames: pixels must be [N, 3, H, W], got " + Describe(pixels));
  return pixels.detach()
      .clamp(0.0, 1.0)
      .mul(255.0)
      .round()
      .to(at::kByte)
      .permute({0, 2, 3, 1})
      .contiguous();
}

double FramePsnr(const at::Tensor& frames, const at::Tensor& reference) {
  Require(frames.scalar_type() == at::kByte && reference.scalar_type() == at::kByte &&
              frames.dim() == 4 && frames.size(3) == 3 && frames.sizes() == reference.sizes(),
          "FramePsnr: frames and reference must be uint8 [N, H, W, 3] of one shape, got " +
              Describe(frames) + " and " + Describe(reference));
  const double mse =
      (frames.to(at::kDouble) - reference.to(at::kDouble)).square().mean().item<double>();
  if (mse == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

nlohmann::json FrameTokenizerConfigToJson(const FrameTokenizerConfig& config) {
  return {{"width", config.width},
          {"height", config.height},
          {"latent_dim", config.latent_dim},
          {"channels", config.channels}};
}

FrameTokenizerConfig FrameTokenizerConfigFromJson(const nlohmann::json& json) {
  FrameTokenizerConfig config;
  config.width = json.at("width").get<int>();
  config.height = json.at("height").get<int>();
  config.latent_dim = json.at("latent_dim").get<int>();
  config.channels = json.at("channels").get<int>();
  return config;
}

// The model archive stores a normalizer with every model; a tokenizer has
// none of its own (video models fit theirs to the latent sequences, as state
// models do to observations), so its files hold the identity of latent_dim.
void SaveFrameTokenizer(const std::string& path, const FrameTokenizerInfo& info,
                        FrameAutoencoderImpl& model) {
  Require(FrameTokenizerConfigToJson(info.config) == FrameTokenizerConfigToJson(model.config()),
          "SaveFrameTokenizer: the info's config differs from the model's");
  const int latent_dim = info.config.latent_dim;
  nlohmann::json metadata = ProvenanceHeader(info, kFrameTokenizerFormat);
  metadata["config"] = FrameTokenizerConfigToJson(info.config);
  SaveModelArchive(path, metadata, Normalizer(at::zeros({latent_dim}), at::ones({latent_dim})),
                   model);
}

FrameTokenizerCheckpoint LoadFrameTokenizer(const std::string& path,
                                            const CheckpointExpectation& expect) {
  ModelArchive opened = OpenModelArchive(path, kFrameTokenizerFormat, "a dfmpc frame tokenizer");
  FrameTokenizerCheckpoint checkpoint;
  FrameTokenizerInfo& info = checkpoint.info;
  try {
    static_cast<ModelProvenance&>(info) = ReadProvenance(opened.metadata);
    info.config = FrameTokenizerConfigFromJson(opened.metadata.at("config"));
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  }
  // A tokenizer has no token dimension: only the task is checked.
  CheckExpectation(path, info.task, 0, {expect.task, 0});
  try {
    checkpoint.model = FrameAutoencoder(info.config);
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(path, e.what());
  }
  ReadNormalizerAndWeights(opened, info.config.latent_dim, *checkpoint.model);
  return checkpoint;
}

}  // namespace dfmpc::worldmodel
