// The usual learned-dynamics baseline: a one-step MLP that maps the current
// normalized token x_t = [a_{t-1}, o_t] and the action a_t to the next
// normalized observation o_{t+1}, predicting the change o_{t+1} - o_t.
// Trained with AdamW (cosine learning-rate decay) on the mean squared error over random transitions of the
// same normalized token sequences as the transformer; multi-step predictions
// roll it out autoregressively on given actions.
//
// Checkpoints hold the weights, the config, the normalization statistics,
// the task, a format version and the library version in one file, written
// atomically, like the transformer's (checkpoint.h).
#ifndef DFMPC_WORLDMODEL_MLP_DYNAMICS_H_
#define DFMPC_WORLDMODEL_MLP_DYNAMICS_H_

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
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {

struct MlpDynamicsConfig {
  TokenLayout layout;
  int width = 256;
  int hidden_layers = 3;

  // Throws std::invalid_argument naming the first impossible field.
  void Validate() const;
};

class MlpDynamicsImpl : public torch::nn::Module {
 public:
  // Initial weights are a function of `init_seed` alone; the process-wide
  // random generator is left as it was.
  explicit MlpDynamicsImpl(const MlpDynamicsConfig& config, uint64_t init_seed = 0);

  const MlpDynamicsConfig& config() const { return config_; }

  // token: [..., d] normalized x_t; action: [..., action_dim] normalized a_t
  // (the action part of token t + 1). Returns the normalized o_{t+1}.
  at::Tensor Forward(const at::Tensor& token, const at::Tensor& action);

  // Rolls out from `token` [B, d] on `actions` [B, H, action_dim] (the
  // action parts of the next H tokens). Returns the H predicted tokens
  // [B, H, d], each holding its given action and the predicted observation.
  at::Tensor Rollout(const at::Tensor& token, const at::Tensor& actions);

 private:
  MlpDynamicsConfig config_;
  torch::nn::Sequential net_{nullptr};
};

TORCH_MODULE(MlpDynamics);

// The optimiser's settings (optimizer_options.h; the seed draws the
// transitions) of an MLP dynamics or value model.
struct MlpTrainOptions : OptimizerOptions {
  MlpTrainOptions() {
    steps = 5000;
    batch_size = 256;  // transitions (value model: rows)
    learning_rate = 1e-3;
    min_learning_rate_ratio = 0.01;
    weight_decay = 0.01;
  }

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const { OptimizerOptions::Validate("MLP training"); }
};

// Mean squared error of the predicted next normalized observation over every
// transition of `sequences` ([T_i, d] normalized tokens), without gradients.
double MlpDynamicsLoss(MlpDynamicsImpl& model, const std::vector<at::Tensor>& sequences);

// Trains `model` for options.steps steps on batches of random transitions
// (sequence, t) of `train`; the same model weights, data and seed give the
// same result. `on_progress(step, loss)` is called after every step.
// Throws std::invalid_argument when `train` holds no transition or its
// token dimension does not match the model. Leaves the model in eval mode.
void TrainMlpDynamics(MlpDynamicsImpl& model, const std::vector<at::Tensor>& train,
                      const MlpTrainOptions& options,
                      const std::function<void(int, double)>& on_progress = nullptr);

struct MlpModelInfo : ModelProvenance {
  MlpDynamicsConfig config;
};

struct MlpCheckpoint {
  MlpModelInfo info;
  Normalizer normalizer;
  MlpDynamics model{nullptr};
};

// Written atomically (a temporary file renamed into place).
void SaveMlpCheckpoint(const std::string& path, const MlpModelInfo& info,
                       const Normalizer& normalizer, MlpDynamicsImpl& model);

// Throws std::runtime_error naming the file and the problem: missing,
// truncated or not a dfmpc MLP dynamics model, another format version, or a
// mismatch with `expect`. The model is returned in eval mode.
MlpCheckpoint LoadMlpCheckpoint(const std::string& path, const CheckpointExpectation& expect = {});

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_MLP_DYNAMICS_H_
