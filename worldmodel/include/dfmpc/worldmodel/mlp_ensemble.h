// An ensemble of one-step MLP dynamics models (mlp_dynamics.h), as in PETS:
// E members of one architecture trained on the same data from different
// seeds. Planning rolls out the members' mean prediction.
//
// One file holds every member's weights, the shared normalization
// statistics, the task, the control rate (physics steps per control step) of
// the data and each member's seed, written atomically with a checksum like
// every model file. Its format name ("dfmpc-mlp-ensemble") differs from a
// single MLP's and a transformer's, so loading the wrong kind is refused.
#ifndef DFMPC_WORLDMODEL_MLP_ENSEMBLE_H_
#define DFMPC_WORLDMODEL_MLP_ENSEMBLE_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {

class MlpEnsembleImpl : public torch::nn::Module {
 public:
  // Takes the trained `members` (at least one, all of one config).
  explicit MlpEnsembleImpl(const std::vector<MlpDynamics>& members);
  // `size` untrained members of `config` (weights to be loaded).
  MlpEnsembleImpl(const MlpDynamicsConfig& config, int size);

  const MlpDynamicsConfig& config() const { return config_; }
  int size() const { return static_cast<int>(members_.size()); }
  MlpDynamicsImpl& member(int i) { return *members_.at(i); }

  // The members' mean normalized o_{t+1}; arguments as MlpDynamicsImpl::Forward.
  at::Tensor Forward(const at::Tensor& token, const at::Tensor& action);

  // As MlpDynamicsImpl::Rollout, each step from the previous mean prediction.
  at::Tensor Rollout(const at::Tensor& token, const at::Tensor& actions);

  // Rollout's tokens [B, H, d] and the cost of the members' disagreement
  // along them [B]: `weight` times the sum over steps of the std across
  // members of their predicted normalized o_{t+1} from the same (mean)
  // state, averaged over the observation features. Where the members
  // disagree the rollout is a guess. Weight 0 skips the members' separate
  // predictions: Rollout's tokens and a zero penalty.
  struct PenalizedRollout {
    at::Tensor tokens;
    at::Tensor penalty;
  };
  PenalizedRollout RolloutPenalizingDisagreement(const at::Tensor& token, const at::Tensor& actions,
                                                 double weight);

 private:
  MlpDynamicsConfig config_;
  std::vector<MlpDynamics> members_;
  torch::nn::ModuleList list_;  // registers the members' parameters
};

TORCH_MODULE(MlpEnsemble);

struct MlpEnsembleInfo {
  MlpModelInfo model;                // task, member config, notes, versions
  int action_repeat = 1;             // physics steps per control step of the data
  std::vector<std::uint64_t> seeds;  // of each member's weights and data order
};

struct MlpEnsembleCheckpoint {
  MlpEnsembleInfo info;
  Normalizer normalizer;
  MlpEnsemble ensemble{nullptr};
};

// Written atomically. Throws std::invalid_argument when the info (seeds per
// member, action repeat, dimensions) does not match the ensemble.
void SaveMlpEnsemble(const std::string& path, const MlpEnsembleInfo& info,
                     const Normalizer& normalizer, MlpEnsembleImpl& ensemble);

// Throws std::runtime_error naming the file and the problem: missing,
// corrupt, not an MLP dynamics ensemble (a single MLP or a transformer
// checkpoint included), another format version, or a mismatch with `expect`.
// The ensemble is returned in eval mode.
MlpEnsembleCheckpoint LoadMlpEnsemble(const std::string& path,
                                      const CheckpointExpectation& expect = {});

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_MLP_ENSEMBLE_H_
