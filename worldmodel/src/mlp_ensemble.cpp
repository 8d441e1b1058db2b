#include "dfmpc/worldmodel/mlp_ensemble.h"

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "mlp_internal.h"
#include "model_archive.h"

namespace dfmpc::worldmodel {
namespace {

constexpr const char* kFormatName = "dfmpc-mlp-ensemble";

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

bool SameConfig(const MlpDynamicsConfig& a, const MlpDynamicsConfig& b) {
  return a.layout.action_dim == b.layout.action_dim &&
         a.layout.observation_dim == b.layout.observation_dim &&
         a.layout.observation_deltas == b.layout.observation_deltas && a.width == b.width &&
         a.hidden_layers == b.hidden_layers;
}

void CheckInfo(const MlpEnsembleInfo& info, int size) {
  Require(info.action_repeat >= 1, "MLP ensemble: action_repeat must be >= 1");
  Require(static_cast<int>(info.seeds.size()) == size,
          "MLP ensemble: " + std::to_string(info.seeds.size()) + " seeds for " +
              std::to_string(size) + " members");
}

nlohmann::json ToJson(const MlpEnsembleInfo& info) {
  nlohmann::json j = internal::MlpInfoToJson(info.model, kFormatName);
  j["action_repeat"] = info.action_repeat;
  j["seeds"] = info.seeds;
  return j;
}

MlpEnsembleInfo FromJson(const nlohmann::json& j) {
  MlpEnsembleInfo info;
  info.model = internal::MlpInfoFromJson(j);
  info.action_repeat = j.at("action_repeat").get<int>();
  info.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
  Require(!info.seeds.empty(), "an ensemble of no member");
  CheckInfo(info, static_cast<int>(info.seeds.size()));
  return info;
}

}  // namespace

MlpEnsembleImpl::MlpEnsembleImpl(const std::vector<MlpDynamics>& members) : members_(members) {
  Require(!members_.empty(), "MLP ensemble: no member");
  config_ = members_.front()->config();
  for (const MlpDynamics& m : members_) {
    Require(SameConfig(m->config(), config_), "MLP ensemble: members of different configs");
    list_->push_back(m);
  }
  register_module("members", list_);
}

MlpEnsembleImpl::MlpEnsembleImpl(const MlpDynamicsConfig& config, int size)
    : MlpEnsembleImpl([&] {
        Require(size >= 1, "MLP ensemble: size must be >= 1, not " + std::to_string(size));
        std::vector<MlpDynamics> members;
        for (int i = 0; i < size; ++i) members.emplace_back(config);
        return members;
      }()) {}

at::Tensor MlpEnsembleImpl::Forward(const at::Tensor& token, const at::Tensor& action) {
  at::Tensor sum = members_.front()->Forward(token, action);
  for (std::size_t i = 1; i < members_.size(); ++i) sum = sum + members_[i]->Forward(token, action);
  return sum / static_cast<double>(members_.size());
}

at::Tensor MlpEnsembleImpl::Rollout(const at::Tensor& token, const at::Tensor& actions) {
  return internal::RolloutOneStep(
      config_.layout, token, actions,
      [this](const at::Tensor& x, const at::Tensor& a) { return Forward(x, a); });
}

MlpEnsembleImpl::PenalizedRollout MlpEnsembleImpl::RolloutPenalizingDisagreement(
    const at::Tensor& token, const at::Tensor& actions, double weight) {
  if (weight == 0.0) {
    const at::Tensor tokens = Rollout(token, actions);
    return {tokens, at::zeros({tokens.size(0)}, tokens.options())};
  }
  std::vector<at::Tensor> spreads;
  const at::Tensor tokens = internal::RolloutOneStep(
      config_.layout, token, actions, [&](const at::Tensor& x, const at::Tensor& a) {
        std::vector<at::Tensor> predictions;
        for (MlpDynamics& member : members_) predictions.push_back(member->Forward(x, a));
        const at::Tensor stacked = at::stack(predictions);  // [E, B, obs]
        spreads.push_back(stacked.std(0, /*unbiased=*/false).mean(-1));
        return stacked.mean(0);
      });
  return {tokens, weight * at::stack(spreads, 1).sum(1)};
}

void SaveMlpEnsemble(const std::string& path, const MlpEnsembleInfo& info,
                     const Normalizer& normalizer, MlpEnsembleImpl& ensemble) {
  CheckInfo(info, ensemble.size());
  Require(SameConfig(info.model.config, ensemble.config()) &&
              normalizer.dim() == info.model.config.layout.token_dim(),
          "SaveMlpEnsemble: normalizer, info and ensemble dimensions differ");
  SaveModelArchive(path, ToJson(info), normalizer, ensemble);
}

MlpEnsembleCheckpoint LoadMlpEnsemble(const std::string& path,
                                      const CheckpointExpectation& expect) {
  ModelArchive opened = OpenModelArchive(path, kFormatName, "an MLP dynamics ensemble");
  MlpEnsembleCheckpoint checkpoint;
  try {
    checkpoint.info = FromJson(opened.metadata);
    const int token_dim = checkpoint.info.model.config.layout.token_dim();
    CheckExpectation(path, checkpoint.info.model.task, token_dim, expect);
    checkpoint.ensemble =
        MlpEnsemble(checkpoint.info.model.config, static_cast<int>(checkpoint.info.seeds.size()));
    checkpoint.normalizer = ReadNormalizerAndWeights(opened, token_dim, *checkpoint.ensemble);
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(path, e.what());
  }
  return checkpoint;
}

}  // namespace dfmpc::worldmodel
