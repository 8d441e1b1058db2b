// The diffusion-forcing transformer: a causal transformer over tokens of
// dimension d in which every token carries its own noise level.
//
// Each token is embedded by a linear layer; its timestep conditions every
// block through adaptive layer norm (shift, scale and gate per token, as in
// DiT). Attention uses rotary position embeddings, which make scores depend
// on position differences only; kv_cache.h explains how this keeps positions
// bounded after eviction.
//
// Known actions (optional, action_input_dim > 0): the first action_input_dim
// features of a token are its action. With inpainting (sampler.h) a known
// action reaches the model only noised to its token's level, so a dynamics
// rollout never sees the exact action it is asked to follow until the last
// call. The side input gives it clean: [action * known, known] per token
// through a bias-free linear layer added to the token embedding; zero (or
// absent) means unknown. Training gives it for a random half of the tokens,
// so the same model still generates actions when planning.
//
// Outcome condition (optional, outcome_input): one number per sequence, the
// quantile of the outcome its window should have among the training
// windows (trainer.h), given as [2 q - 1, 1] (or [0, 0]: no condition)
// through a bias-free linear layer added to the embedding of the noisy
// tokens only. A window's clean prefix never sees it (attention is causal),
// so the keys and values a KV cache holds do not depend on it: a
// conditioned and an unconditioned call share one cache, which is what
// classifier-free guidance needs.
//
// Hidden context actions (optional, hidden_clean_actions > 0): the first
// hidden_clean_actions features of a clean token (timestep -1) reach the
// model as zeros. A token is [a_{t-1}, o_t], so the action taken before an
// observation cannot stand in for the observation when the next action is
// generated: a model that reads it learns that consecutive actions of its
// data are alike and, run closed-loop, follows its own last action rather
// than the robot (the copycat problem of behaviour cloning). Noisy tokens
// keep their actions, and the mask depends on the timesteps alone, so
// training, sampling and the cache see the same inputs.
//
// A CFG-aware student (distiller.h, max_outcome_guidance > 0) also takes the
// guidance weight w: its input is [2 q - 1, 1, w] (or [0, 0, 0]), and one
// call gives what its teacher gave as the lerp of an unconditioned and a
// conditioned call at weight w, for w in [0, max_outcome_guidance].
//
// The output has the token's dimension and is interpreted as a v, x0 or eps
// prediction by the sampler.
#ifndef DFMPC_WORLDMODEL_TRANSFORMER_H_
#define DFMPC_WORLDMODEL_TRANSFORMER_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dfmpc/worldmodel/kv_cache.h"

namespace dfmpc::worldmodel {

struct TransformerConfig {
  int token_dim = 0;         // d: features per token
  int width = 128;           // model width D
  int depth = 4;             // transformer blocks
  int heads = 4;             // attention heads; D must be divisible by it
  int mlp_ratio = 4;         // hidden width of the MLP is mlp_ratio * D
  int max_positions = 2048;  // most tokens one query may attend to (cache + window)
  int num_timesteps = 1000;  // training timesteps the level embedding covers
  int action_input_dim = 0;  // clean known-action side input (0: none; else the action size)
  bool outcome_input = false;  // the outcome condition (see above)
  // The largest guidance weight a CFG-aware student takes as an input (see
  // above); 0: none. Needs outcome_input.
  double max_outcome_guidance = 0.0;
  int hidden_clean_actions = 0;  // leading features a clean token hides (see above); 0: none

  // Throws std::invalid_argument naming the first impossible field.
  void Validate() const;
  int head_dim() const { return width / heads; }
  bool outcome_guidance_input() const { return max_outcome_guidance > 0.0; }
  // Columns of the outcome input: 3 with the guidance weight, else 2.
  int outcome_input_width() const { return outcome_guidance_input() ? 3 : 2; }
};

// Keys (rotated) and values of the window tokens, one tensor per layer,
// each [batch, heads, window, head_dim].
struct WindowKeysValues {
  std::vector<at::Tensor> keys;
  std::vector<at::Tensor> values;
};

class TransformerBlock;
class ConditioningTable;
class TransposedWeights;
struct LinearCopy;
struct ForwardSetup;
class ForwardGraphs;

class DfTransformerImpl : public torch::nn::Module {
 public:
  // Initial weights are a function of `init_seed` alone; the process-wide
  // random generator is left as it was.
  explicit DfTransformerImpl(const TransformerConfig& config, uint64_t init_seed = 0);
  ~DfTransformerImpl() override;

  const TransformerConfig& config() const { return config_; }

  // tokens: [B, w, d]. timesteps: [w] (shared by the batch) or [B, w], int64
  // in [-1, T-1] (-1 is clean), on the CPU or the model's device (on the
  // CPU a CUDA model reads them without waiting for the GPU). The window follows the tokens of
  // `cache` (or starts at position 0 when cache is null; a cache built for another model throws,
  // see CheckCacheOptions), attends causally to itself and to every cached token. Returns [B, w,
  // d]. When `window_kv` is non-null it receives the window's keys (rotated at their positions) and
  // values, ready to be committed to the cache. `known_actions` ([B or 1, w, action_input_dim + 1],
  // see above) may be given only to a model with the side input; undefined means no action is
  // known. `outcome` ([B or 1, config().outcome_input_width()], OutcomeInput) only to a model with
  // the outcome input; undefined means no condition.
  at::Tensor Forward(const at::Tensor& tokens, const at::Tensor& timesteps, const KvCache* cache,
                     WindowKeysValues* window_kv = nullptr,
                     const at::Tensor& known_actions = at::Tensor(),
                     const at::Tensor& outcome = at::Tensor());

  // Cache options matching this model's layers, heads, dtype and device.
  KvCacheOptions CacheOptions() const;
  // Throws std::invalid_argument naming the first of layers, heads, head_dim,
  // dtype and device in which `options` differ from CacheOptions().
  void CheckCacheOptions(const KvCacheOptions& options) const;

 private:
  friend class ForwardGraphs;
  // The two halves of Forward (src/forward_setup.h): the checks and host
  // work, then the device work alone, which a CUDA graph can capture.
  ForwardSetup Prepare(const at::Tensor& tokens, const at::Tensor& timesteps, const KvCache* cache,
                       const at::Tensor& known_actions, const at::Tensor& outcome = at::Tensor());
  at::Tensor Run(const ForwardSetup& setup, const at::Tensor& tokens, WindowKeysValues* window_kv,
                 const at::Tensor& known_actions, const at::Tensor& outcome = at::Tensor());
  void CheckTimestepRange(int64_t lowest, int64_t highest) const;
  // ForwardSetup::read for timesteps `steps` ([cond_batch, window]).
  at::Tensor ReadMask(const at::Tensor& steps, const at::TensorOptions& options) const;
  // [U, (6 depth + 2) width]: every block's Modulation of `steps` ([U]),
  // then the final norm's shift and 1 + scale.
  at::Tensor ConditioningRows(const at::Tensor& steps);
  // Per linear layer (linear_layers_), the copy a call of `tokens`
  // multiplies by (transposed_weights.h; undefined: the layer itself).
  std::vector<LinearCopy> LinearCopies(const at::Tensor& tokens);

  TransformerConfig config_;
  torch::nn::Linear input_{nullptr};
  torch::nn::Linear known_action_input_{nullptr};  // only with action_input_dim > 0
  torch::nn::Linear outcome_input_{nullptr};       // only with outcome_input
  torch::nn::Sequential time_mlp_{nullptr};
  std::vector<std::shared_ptr<TransformerBlock>> blocks_;
  torch::nn::Linear final_modulation_{nullptr};
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear output_{nullptr};
  at::Tensor rotary_frequencies_;  // [head_dim / 2], double
  // What ConditioningRows reads, and its inference-time memo.
  std::vector<at::Tensor> conditioning_weights_;
  std::unique_ptr<ConditioningTable> conditioning_table_;
  // The input's, the output's and every block's linear layers (qkv,
  // projection, MLP), and their transposed copies for CPU calls (float for
  // few tokens, bfloat16 for many: cpu_bf16.h).
  std::vector<torch::nn::Linear> linear_layers_;
  std::unique_ptr<TransposedWeights> transposed_weights_;
};

TORCH_MODULE(DfTransformer);

// The side input of a model with action_input_dim = `actions.size(-1)`:
// [actions * known, known] with `known` a float (0 or 1) [..., 1] tensor;
// the two broadcast against each other.
at::Tensor KnownActionInput(const at::Tensor& actions, const at::Tensor& known);

// The outcome input of a model with outcome_input: [2 quantile - 1, 1] per
// row where `given` (float, 0 or 1), [0, 0] elsewhere; `quantiles` and
// `given` are [B] (or broadcast to each other). Returns [B, 2]. With
// `weights` ([B] or broadcast), a CFG-aware student's input: [B, 3], the
// guidance weight last ([0, 0, 0] where not given).
at::Tensor OutcomeInput(const at::Tensor& quantiles, const at::Tensor& given,
                        const at::Tensor& weights = at::Tensor());

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_TRANSFORMER_H_
