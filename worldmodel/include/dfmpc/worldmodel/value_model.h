// A state-value critic, the planner's view beyond its horizon (issue 31):
// an MLP from an observation o_t to the discounted return of the data's
// behaviour policy from it, V(o_t) = sum_k gamma^k r_{t+k}, regressed on the
// Monte-Carlo returns of the dataset's episodes.
//
// Values are kept as a reward rate, v = (1 - gamma) V / reward_scale with
// reward_scale the largest reward of a control step (its action repeat, for
// rewards summed over physics steps in [0, 1] each): v lies in [0, 1]
// whatever gamma and the control rate, and 1 - v is the share of the reward
// the critic expects to miss from that state on.
//
// Monte-Carlo returns of episodes cut by a time limit are short by the
// rewards after the cut; the last TruncatedTail(gamma) steps of every
// episode, whose cut-off part weighs more than 5% of a return, are not
// trained on.
//
// Files hold the weights, the config, the observation normalization, the
// task and the control rate, written atomically with a checksum like every
// model file, under their own format name ("dfmpc-value"), so a dynamics
// model or a transformer given as a critic is refused and vice versa.
#ifndef DFMPC_WORLDMODEL_VALUE_MODEL_H_
#define DFMPC_WORLDMODEL_VALUE_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {

struct ValueModelConfig {
  int observation_dim = 0;
  int width = 256;
  int hidden_layers = 2;
  double discount = 0.99;  // gamma per control step, in (0, 1)

  // Throws std::invalid_argument naming the first impossible field.
  void Validate() const;
};

class ValueModelImpl : public torch::nn::Module {
 public:
  // Initial weights are a function of `init_seed` alone.
  explicit ValueModelImpl(const ValueModelConfig& config, uint64_t init_seed = 0);

  const ValueModelConfig& config() const { return config_; }

  // Normalized observations [..., observation_dim] -> reward rates v [...],
  // through a sigmoid: in (0, 1) without a clamp, so that no state's value
  // saturates and a plan's cost keeps its gradient.
  at::Tensor Forward(const at::Tensor& observations);

 private:
  ValueModelConfig config_;
  torch::nn::Sequential net_{nullptr};
};

TORCH_MODULE(ValueModel);

// The steps at the end of an episode whose Monte-Carlo return misses more
// than 5% of its weight (the smallest n with gamma^n <= 0.05): 299 at 0.99.
int TruncatedTail(double discount);

// One episode's training examples: `observations` [L, D] (o_t, before the
// step whose reward is rewards[t]) and `rewards` [L] give the
// [L - TruncatedTail, D + 1] rows [o_t, v_t] of its first L - tail steps
// (none when the episode is shorter than the tail), v_t the reward rate of
// the discounted return from o_t. Throws std::invalid_argument on other
// shapes or a reward_scale <= 0.
at::Tensor ValueExamples(const at::Tensor& observations, const at::Tensor& rewards, double discount,
                         double reward_scale);

// Mean squared error of v over every row of `examples` ([n_i, D + 1], the
// observations normalized), without gradients.
double ValueModelLoss(ValueModelImpl& model, const std::vector<at::Tensor>& examples);

// Trains `model` for options.steps AdamW steps on batches of random rows of
// `train`; the same weights, data and seed give the same result.
// `on_progress(step, loss)` follows every step. Throws std::invalid_argument
// when `train` holds no row or its width is not observation_dim + 1. Leaves
// the model in eval mode.
void TrainValueModel(ValueModelImpl& model, const std::vector<at::Tensor>& train,
                     const MlpTrainOptions& options,
                     const std::function<void(int, double)>& on_progress = nullptr);

struct ValueModelInfo : ModelProvenance {
  ValueModelConfig config;
  int action_repeat = 1;  // physics steps per control step of the data
};

struct ValueCheckpoint {
  ValueModelInfo info;
  Normalizer normalizer;  // of the observations
  ValueModel model{nullptr};

  // v of observations in environment units [..., D], on the model's device.
  at::Tensor Value(const at::Tensor& observations) const;
};

// Written atomically. Throws std::invalid_argument when the info, the
// normalizer and the model disagree.
void SaveValueModel(const std::string& path, const ValueModelInfo& info,
                    const Normalizer& normalizer, ValueModelImpl& model);

// Throws std::runtime_error naming the file and the problem: missing,
// corrupt, not a value model (a dynamics model included), another format
// version, or another task than expect.task (expect.token_dim, if set, is
// checked against the observation dimension). In eval mode, on `device`.
ValueCheckpoint LoadValueModel(const std::string& path, const CheckpointExpectation& expect = {},
                               c10::Device device = c10::Device(c10::kCPU));

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_VALUE_MODEL_H_
