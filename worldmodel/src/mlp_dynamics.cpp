#include "dfmpc/worldmodel/mlp_dynamics.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "dfmpc/worldmodel/device.h"
#include "mlp_internal.h"
#include "model_archive.h"
#include "seeded_init.h"

namespace dfmpc::worldmodel {
namespace {

constexpr const char* kFormatName = "dfmpc-mlp-dynamics";

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// Every transition of `sequences`: tokens x_t, actions a_t and observations
// o_{t+1}, stacked over all sequences and times.
struct Transitions {
  at::Tensor tokens, actions, next_observations;
};

// Every transition of `sequences`, on `device`.
Transitions AllTransitions(const std::vector<at::Tensor>& sequences, const TokenLayout& layout,
                           c10::Device device) {
  std::vector<at::Tensor> tokens, actions, next_observations;
  for (const at::Tensor& s : sequences) {
    Require(s.dim() == 2 && s.size(1) == layout.token_dim(),
            "MLP dynamics: sequences must be [T, " + std::to_string(layout.token_dim()) + "]");
    if (s.size(0) < 2) continue;
    const at::Tensor next = s.slice(0, 1);
    tokens.push_back(s.slice(0, 0, -1));
    actions.push_back(next.slice(1, 0, layout.action_dim));
    next_observations.push_back(next.slice(1, layout.observation_offset()));
  }
  Require(!tokens.empty(), "MLP dynamics: no sequence holds a transition (2 tokens)");
  return {at::cat(tokens).to(device, at::kFloat), at::cat(actions).to(device, at::kFloat),
          at::cat(next_observations).to(device, at::kFloat)};
}

}  // namespace

void MlpDynamicsConfig::Validate() const {
  Require(layout.action_dim > 0, "MLP dynamics: action_dim must be positive");
  Require(layout.observation_dim > 0, "MLP dynamics: observation_dim must be positive");
  Require(!layout.observation_deltas,
          "MLP dynamics: tokens must not carry observation changes (it predicts them itself)");
  Require(width > 0, "MLP dynamics: width must be positive");
  Require(hidden_layers > 0, "MLP dynamics: hidden_layers must be positive");
}

MlpDynamicsImpl::MlpDynamicsImpl(const MlpDynamicsConfig& config, uint64_t init_seed)
    : config_(config) {
  config_.Validate();
  const GlobalGeneratorRestorer restore_global_generator;
  net_ = torch::nn::Sequential();
  int in = config_.layout.token_dim() + config_.layout.action_dim;
  for (int layer = 0; layer < config_.hidden_layers; ++layer) {
    net_->push_back(torch::nn::Linear(in, config_.width));
    net_->push_back(torch::nn::SiLU());
    in = config_.width;
  }
  net_->push_back(torch::nn::Linear(in, config_.layout.observation_dim));
  register_module("net", net_);
  InitializeLinearLayers(*this, init_seed);
}

at::Tensor MlpDynamicsImpl::Forward(const at::Tensor& token, const at::Tensor& action) {
  const at::Tensor observation = token.slice(-1, config_.layout.observation_offset());
  return observation + net_->forward(at::cat({token, action}, -1));
}

at::Tensor MlpDynamicsImpl::Rollout(const at::Tensor& token, const at::Tensor& actions) {
  return internal::RolloutOneStep(
      config_.layout, token, actions,
      [this](const at::Tensor& x, const at::Tensor& a) { return Forward(x, a); });
}

double MlpDynamicsLoss(MlpDynamicsImpl& model, const std::vector<at::Tensor>& sequences) {
  const Transitions all = AllTransitions(sequences, model.config().layout, ModuleDevice(model));
  at::NoGradGuard no_grad;
  return at::mse_loss(model.Forward(all.tokens, all.actions), all.next_observations).item<double>();
}

void TrainMlpDynamics(MlpDynamicsImpl& model, const std::vector<at::Tensor>& train,
                      const MlpTrainOptions& options,
                      const std::function<void(int, double)>& on_progress) {
  options.Validate();
  // Trains where the model is; transitions are picked on the CPU, so a seed
  // picks the same ones on every device.
  const c10::Device device = ModuleDevice(model);
  const Transitions all = AllTransitions(train, model.config().layout, device);
  internal::TrainOnRandomRows(
      model, all.tokens.size(0), device, options,
      [&](const at::Tensor& picks) {
        return at::mse_loss(
            model.Forward(all.tokens.index_select(0, picks), all.actions.index_select(0, picks)),
            all.next_observations.index_select(0, picks));
      },
      on_progress);
}

void SaveMlpCheckpoint(const std::string& path, const MlpModelInfo& info,
                       const Normalizer& normalizer, MlpDynamicsImpl& model) {
  Require(normalizer.dim() == info.config.layout.token_dim() &&
              model.config().layout.token_dim() == info.config.layout.token_dim(),
          "SaveMlpCheckpoint: normalizer, info and model token dimensions differ");
  SaveModelArchive(path, internal::MlpInfoToJson(info, kFormatName), normalizer, model);
}

MlpCheckpoint LoadMlpCheckpoint(const std::string& path, const CheckpointExpectation& expect) {
  ModelArchive opened = OpenModelArchive(path, kFormatName, "an MLP dynamics model");
  MlpCheckpoint checkpoint;
  try {
    checkpoint.info = internal::MlpInfoFromJson(opened.metadata);
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  }
  const int token_dim = checkpoint.info.config.layout.token_dim();
  CheckExpectation(path, checkpoint.info.task, token_dim, expect);
  try {
    checkpoint.model = MlpDynamics(checkpoint.info.config);
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(path, e.what());
  }
  checkpoint.normalizer = ReadNormalizerAndWeights(opened, token_dim, *checkpoint.model);
  return checkpoint;
}

}  // namespace dfmpc::worldmodel
