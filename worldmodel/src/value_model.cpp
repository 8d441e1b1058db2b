#include "dfmpc/worldmodel/value_model.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/device.h"
#include "mlp_internal.h"
#include "model_archive.h"
#include "seeded_init.h"

namespace dfmpc::worldmodel {
namespace {

constexpr const char* kFormatName = "dfmpc-value";

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// Every row of `examples` on `device`, split into observations and targets.
struct Rows {
  at::Tensor observations;
  at::Tensor values;
};

Rows AllRows(const std::vector<at::Tensor>& examples, int observation_dim, c10::Device device) {
  std::vector<at::Tensor> nonempty;
  for (const at::Tensor& e : examples) {
    Require(e.dim() == 2 && e.size(1) == observation_dim + 1,
            "value model: examples must be [n, " + std::to_string(observation_dim + 1) + "]");
    if (e.size(0) > 0) nonempty.push_back(e);
  }
  Require(!nonempty.empty(), "value model: no training example (episodes longer than the tail)");
  const at::Tensor all = at::cat(nonempty).to(device, at::kFloat);
  return {all.narrow(1, 0, observation_dim), all.select(1, observation_dim)};
}

nlohmann::json InfoToJson(const ValueModelInfo& info) {
  const ValueModelConfig& c = info.config;
  nlohmann::json header = ProvenanceHeader(info, kFormatName);
  header["observation_dim"] = c.observation_dim;
  header["width"] = c.width;
  header["hidden_layers"] = c.hidden_layers;
  header["discount"] = c.discount;
  header["action_repeat"] = info.action_repeat;
  return header;
}

ValueModelInfo InfoFromJson(const nlohmann::json& j) {
  ValueModelInfo info;
  static_cast<ModelProvenance&>(info) = ReadProvenance(j);
  info.config.observation_dim = j.at("observation_dim").get<int>();
  info.config.width = j.at("width").get<int>();
  info.config.hidden_layers = j.at("hidden_layers").get<int>();
  info.config.discount = j.at("discount").get<double>();
  info.action_repeat = j.at("action_repeat").get<int>();
  return info;
}

}  // namespace

void ValueModelConfig::Validate() const {
  Require(observation_dim > 0, "value model: observation_dim must be positive");
  Require(width > 0, "value model: width must be positive");
  Require(hidden_layers > 0, "value model: hidden_layers must be positive");
  Require(discount > 0.0 && discount < 1.0,
          "value model: the discount must be in (0, 1), got " + std::to_string(discount));
}

ValueModelImpl::ValueModelImpl(const ValueModelConfig& config, uint64_t init_seed)
    : config_(config) {
  config_.Validate();
  const GlobalGeneratorRestorer restore_global_generator;
  net_ = torch::nn::Sequential();
  int in = config_.observation_dim;
  for (int layer = 0; layer < config_.hidden_layers; ++layer) {
    net_->push_back(torch::nn::Linear(in, config_.width));
    net_->push_back(torch::nn::SiLU());
    in = config_.width;
  }
  net_->push_back(torch::nn::Linear(in, 1));
  register_module("net", net_);
  InitializeLinearLayers(*this, init_seed);
}

at::Tensor ValueModelImpl::Forward(const at::Tensor& observations) {
  return at::sigmoid(net_->forward(observations).squeeze(-1));
}

int TruncatedTail(double discount) {
  Require(discount > 0.0 && discount < 1.0, "value model: the discount must be in (0, 1)");
  return static_cast<int>(std::ceil(std::log(0.05) / std::log(discount) - 1e-9));
}

at::Tensor ValueExamples(const at::Tensor& observations, const at::Tensor& rewards, double discount,
                         double reward_scale) {
  Require(observations.dim() == 2 && rewards.dim() == 1 && rewards.size(0) == observations.size(0),
          "value model: an episode needs observations [L, D] and rewards [L]");
  Require(reward_scale > 0.0, "value model: the reward scale must be positive");
  const int64_t length = observations.size(0);
  const int64_t kept = length - TruncatedTail(discount);
  if (kept <= 0) return at::empty({0, observations.size(1) + 1}, at::kFloat);
  // V_t = r_t + gamma V_{t+1}, backwards in double precision.
  const at::Tensor r = rewards.to(at::kDouble).contiguous();
  const double* reward = r.data_ptr<double>();
  at::Tensor values = at::empty({length}, at::kDouble);
  double* value = values.data_ptr<double>();
  double next = 0.0;
  for (int64_t t = length - 1; t >= 0; --t) next = value[t] = reward[t] + discount * next;
  const at::Tensor rates = (values * ((1.0 - discount) / reward_scale)).narrow(0, 0, kept);
  return at::cat(
      {observations.narrow(0, 0, kept).to(at::kFloat), rates.to(at::kFloat).unsqueeze(1)}, 1);
}

double ValueModelLoss(ValueModelImpl& model, const std::vector<at::Tensor>& examples) {
  const Rows all = AllRows(examples, model.config().observation_dim, ModuleDevice(model));
  at::NoGradGuard no_grad;
  return at::mse_loss(model.Forward(all.observations), all.values).item<double>();
}

void TrainValueModel(ValueModelImpl& model, const std::vector<at::Tensor>& train,
                     const MlpTrainOptions& options,
                     const std::function<void(int, double)>& on_progress) {
  options.Validate();
  const c10::Device device = ModuleDevice(model);
  const Rows all = AllRows(train, model.config().observation_dim, device);
  internal::TrainOnRandomRows(
      model, all.observations.size(0), device, options,
      [&](const at::Tensor& picks) {
        return at::mse_loss(model.Forward(all.observations.index_select(0, picks)),
                            all.values.index_select(0, picks));
      },
      on_progress);
}

at::Tensor ValueCheckpoint::Value(const at::Tensor& observations) const {
  ValueModelImpl& net = *model.ptr();  // Forward is not const
  const c10::Device device = ModuleDevice(net);
  const Normalizer here = normalizer.To(device);
  return net.Forward(here.Normalize(observations.to(device, at::kFloat)));
}

void SaveValueModel(const std::string& path, const ValueModelInfo& info,
                    const Normalizer& normalizer, ValueModelImpl& model) {
  info.config.Validate();
  const ValueModelConfig& config = model.config();
  Require(normalizer.dim() == info.config.observation_dim,
          "SaveValueModel: the normalizer's dimension is not the observation's");
  Require(config.observation_dim == info.config.observation_dim &&
              config.width == info.config.width &&
              config.hidden_layers == info.config.hidden_layers &&
              config.discount == info.config.discount,
          "SaveValueModel: the info's config is not the model's");
  Require(info.action_repeat >= 1, "SaveValueModel: action_repeat must be >= 1");
  SaveModelArchive(path, InfoToJson(info), normalizer, model);
}

ValueCheckpoint LoadValueModel(const std::string& path, const CheckpointExpectation& expect,
                               c10::Device device) {
  ModelArchive opened =
      OpenModelArchive(path, kFormatName, "a value model", "train one with `dfmpc train-value`");
  ValueCheckpoint checkpoint;
  try {
    checkpoint.info = InfoFromJson(opened.metadata);
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  }
  const int observation_dim = checkpoint.info.config.observation_dim;
  CheckExpectation(path, checkpoint.info.task, observation_dim, expect);
  try {
    checkpoint.model = ValueModel(checkpoint.info.config);
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(path, e.what());
  }
  if (checkpoint.info.action_repeat < 1) FailCheckpoint(path, "action_repeat must be >= 1");
  checkpoint.normalizer =
      ReadNormalizerAndWeights(opened, observation_dim, *checkpoint.model).To(device);
  checkpoint.model->to(device);
  return checkpoint;
}

}  // namespace dfmpc::worldmodel
