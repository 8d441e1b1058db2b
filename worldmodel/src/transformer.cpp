#include "dfmpc/worldmodel/transformer.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/activation.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "attention.h"
#include "conditioning_table.h"
#include "dfmpc/worldmodel/between_blocks.h"
#include "dfmpc/worldmodel/cpu_bf16.h"
#include "dfmpc/worldmodel/device.h"
#include "forward_setup.h"
#include "modulated_norm.h"
#include "seeded_init.h"
#include "transposed_weights.h"
#include "weight_signature.h"

namespace dfmpc::worldmodel {

namespace F = torch::nn::functional;

void TransformerConfig::Validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("TransformerConfig: " + what);
  };
  require(token_dim > 0, "token_dim must be positive, got " + std::to_string(token_dim));
  require(width > 0 && depth > 0 && heads > 0 && mlp_ratio > 0,
          "width, depth, heads and mlp_ratio must be positive");
  require(width % heads == 0, "width " + std::to_string(width) +
                                  " is not divisible by heads " + std::to_string(heads));
  require(head_dim() % 2 == 0, "head_dim (width / heads) must be even for rotary embeddings");
  require(max_positions > 0, "max_positions must be positive");
  require(num_timesteps > 0, "num_timesteps must be positive");
  require(action_input_dim >= 0 && action_input_dim < token_dim,
          "action_input_dim must be in [0, token_dim)");
  require(std::isfinite(max_outcome_guidance) && max_outcome_guidance >= 0.0,
          "max_outcome_guidance must be finite and >= 0");
  require(!outcome_guidance_input() || outcome_input,
          "max_outcome_guidance > 0 needs the outcome input");
  require(hidden_clean_actions >= 0 && hidden_clean_actions < token_dim,
          "hidden_clean_actions must be in [0, token_dim)");
}

// One pre-norm block whose norms are modulated per token by its timestep.
class TransformerBlock : public torch::nn::Module {
 public:
  TransformerBlock(int width, int heads, int mlp_ratio)
      : heads_(heads),
        norm1_(register_module(
            "norm1", torch::nn::LayerNorm(
                         torch::nn::LayerNormOptions({width}).elementwise_affine(false)))),
        norm2_(register_module(
            "norm2", torch::nn::LayerNorm(
                         torch::nn::LayerNormOptions({width}).elementwise_affine(false)))),
        qkv_(register_module("qkv", torch::nn::Linear(width, 3 * width))),
        proj_(register_module("proj", torch::nn::Linear(width, width))),
        fc1_(register_module("fc1", torch::nn::Linear(width, mlp_ratio * width))),
        fc2_(register_module("fc2", torch::nn::Linear(mlp_ratio * width, width))),
        modulation_(register_module("modulation", torch::nn::Linear(width, 6 * width))) {}

  // cond: [U, D] activated conditioning of U timesteps. Returns [U, 6 D]:
  // shift, 1 + scale and gate of the attention, then of the MLP.
  at::Tensor Modulation(const at::Tensor& cond) {
    at::Tensor modulation = modulation_(cond);
    const int64_t width = cond.size(1);
    modulation.narrow(1, width, width).add_(1);
    modulation.narrow(1, 4 * width, width).add_(1);
    return modulation;
  }

  // x: [B, w, D]; modulation: [B or 1, w, 6 D], each token's Modulation;
  // angles: ForwardSetup::query_angles; copies: LinearLayers()' copies
  // (transposed_weights.h), undefined ones for the layers themselves.
  at::Tensor Forward(const at::Tensor& x, const at::Tensor& modulation,
                     const std::vector<RotaryAngles>& angles, const at::Tensor& future,
                     const std::vector<CachedKeysValues>& cached, c10::ArrayRef<LinearCopy> copies,
                     at::Tensor* keys, at::Tensor* values) {
    const int64_t batch = x.size(0), window = x.size(1), width = x.size(2);
    const auto mod = modulation.chunk(6, -1);
    at::Tensor h = ModulatedNorm(norm1_, x, mod[0], mod[1]);
    const auto qkv = LinearThrough(qkv_, h, copies[0])
                         .view({batch, window, 3, heads_, width / heads_})
                         .permute({2, 0, 3, 1, 4});
    // The window's queries (scaled) and keys rotate in one operation.
    const at::Tensor rotated = ApplyRotary(qkv.narrow(0, 0, 2), angles[0]);
    *keys = rotated[1];
    *values = qkv[2];
    std::vector<at::Tensor> queries = {rotated[0]};
    for (size_t i = 1; i < angles.size(); ++i) queries.push_back(ApplyRotary(qkv[0], angles[i]));
    const at::Tensor attended = CausalAttention(queries, *keys, *values, future, cached);
    const at::Tensor out = at::addcmul(
        x, mod[2],
        LinearThrough(proj_, attended.transpose(1, 2).reshape({batch, window, width}), copies[1]));
    h = ModulatedNorm(norm2_, out, mod[3], mod[4]);
    return at::addcmul(out, mod[5], MlpThrough(fc1_, fc2_, h, copies[2], copies[3]));
  }

  std::vector<torch::nn::Linear> LinearLayers() const { return {qkv_, proj_, fc1_, fc2_}; }

  const torch::nn::Linear& modulation_layer() const { return modulation_; }

 private:
  int heads_;
  torch::nn::LayerNorm norm1_, norm2_;
  torch::nn::Linear qkv_, proj_, fc1_, fc2_, modulation_;
};

namespace {

// Sinusoidal features of (timestep + 1), so clean (-1) maps to 0.
at::Tensor TimestepFeatures(const at::Tensor& timesteps, int64_t dim) {
  const int64_t half = dim / 2;
  const at::Tensor freqs =
      at::exp(at::arange(half, timesteps.options().dtype(at::kFloat)) *
              (-std::log(10000.0) / half));
  const at::Tensor angles = (timesteps + 1).to(at::kFloat).unsqueeze(1) * freqs.unsqueeze(0);
  at::Tensor features = at::cat({at::cos(angles), at::sin(angles)}, 1);
  if (dim % 2 == 1) features = at::pad(features, {0, 1});
  return features;
}

}  // namespace

DfTransformerImpl::DfTransformerImpl(const TransformerConfig& config, uint64_t init_seed)
    : config_(config), conditioning_table_(std::make_unique<ConditioningTable>()) {
  config_.Validate();
  const GlobalGeneratorRestorer restore_global_generator;
  const int width = config.width;
  input_ = register_module("input", torch::nn::Linear(config.token_dim, width));
  time_mlp_ = register_module(
      "time_mlp", torch::nn::Sequential(torch::nn::Linear(width, width), torch::nn::SiLU(),
                                        torch::nn::Linear(width, width)));
  for (int l = 0; l < config.depth; ++l) {
    blocks_.push_back(register_module(
        "block" + std::to_string(l),
        std::make_shared<TransformerBlock>(width, config.heads, config.mlp_ratio)));
  }
  final_modulation_ = register_module("final_modulation", torch::nn::Linear(width, 2 * width));
  final_norm_ = register_module(
      "final_norm",
      torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).elementwise_affine(false)));
  output_ = register_module("output", torch::nn::Linear(width, config.token_dim));
  rotary_frequencies_ = RotaryFrequencies(config.head_dim());
  if (config.action_input_dim > 0) {
    // Without bias, so an all-zero input (nothing known) adds nothing.
    known_action_input_ = register_module(
        "known_action_input",
        torch::nn::Linear(
            torch::nn::LinearOptions(config.action_input_dim + 1, width).bias(false)));
  }
  if (config.outcome_input) {  // registered last: models without it keep their initial weights
    outcome_input_ = register_module(
        "outcome_input",
        torch::nn::Linear(
            torch::nn::LinearOptions(config.outcome_input_width(), width).bias(false)));
  }
  InitializeLinearLayers(*this, init_seed);
  conditioning_weights_ = time_mlp_->parameters();
  for (const auto& block : blocks_) {
    for (const at::Tensor& weight : block->modulation_layer()->parameters()) {
      conditioning_weights_.push_back(weight);
    }
  }
  for (const at::Tensor& weight : final_modulation_->parameters()) {
    conditioning_weights_.push_back(weight);
  }
  linear_layers_ = {input_, output_};
  for (const auto& block : blocks_) {
    for (const torch::nn::Linear& layer : block->LinearLayers()) linear_layers_.push_back(layer);
  }
  transposed_weights_ = std::make_unique<TransposedWeights>(linear_layers_);
}

DfTransformerImpl::~DfTransformerImpl() = default;

at::Tensor KnownActionInput(const at::Tensor& actions, const at::Tensor& known) {
  const at::Tensor given = actions * known;
  return at::cat({given, known.expand_as(given.narrow(-1, 0, 1))}, -1);
}

at::Tensor OutcomeInput(const at::Tensor& quantiles, const at::Tensor& given,
                        const at::Tensor& weights) {
  std::vector<at::Tensor> inputs = {quantiles.to(at::kFloat), given.to(at::kFloat)};
  if (weights.defined()) inputs.push_back(weights.to(at::kFloat));
  const std::vector<at::Tensor> all = at::broadcast_tensors(inputs);
  std::vector<at::Tensor> columns = {(2 * all[0] - 1) * all[1], all[1]};
  if (weights.defined()) columns.push_back(all[2] * all[1]);
  return at::stack(columns, -1);
}

at::Tensor DfTransformerImpl::Forward(const at::Tensor& tokens, const at::Tensor& timesteps,
                                      const KvCache* cache, WindowKeysValues* window_kv,
                                      const at::Tensor& known_actions, const at::Tensor& outcome) {
  return Run(Prepare(tokens, timesteps, cache, known_actions, outcome), tokens, window_kv,
             known_actions, outcome);
}

ForwardSetup DfTransformerImpl::Prepare(const at::Tensor& tokens, const at::Tensor& timesteps,
                                        const KvCache* cache, const at::Tensor& known_actions,
                                        const at::Tensor& outcome) {
  if (tokens.dim() != 3 || tokens.size(2) != config_.token_dim) {
    throw std::invalid_argument("DfTransformer: tokens must be [batch, window, " +
                                std::to_string(config_.token_dim) + "], got " +
                                std::to_string(tokens.dim()) + "-d tensor with last size " +
                                std::to_string(tokens.dim() ? tokens.size(-1) : 0));
  }
  ForwardSetup setup;
  setup.batch = tokens.size(0);
  setup.window = tokens.size(1);
  const int64_t batch = setup.batch, window = setup.window;
  const at::Tensor steps = timesteps.dim() == 1 ? timesteps.unsqueeze(0) : timesteps;
  if (steps.dim() != 2 || steps.size(1) != window ||
      (steps.size(0) != 1 && steps.size(0) != batch)) {
    throw std::invalid_argument("DfTransformer: timesteps must be [window] or [batch, window]");
  }
  if (window == 0) throw std::invalid_argument("DfTransformer: empty window");
  if (cache != nullptr) {
    CheckCacheOptions(cache->options());
    // Attention reads a history of another batch as shared (batch 1).
    const int history_batch = cache->options().persistent_batch;
    if (history_batch != 1 && history_batch != batch) {
      throw std::invalid_argument("DfTransformer: a window of batch " + std::to_string(batch) +
                                  " cannot attend to a cached history of batch " +
                                  std::to_string(history_batch) + " (must be 1 or the window's)");
    }
  }
  if (known_actions.defined() &&
      (!known_action_input_ || known_actions.dim() != 3 || known_actions.size(1) != window ||
       known_actions.size(2) != config_.action_input_dim + 1 ||
       (known_actions.size(0) != 1 && known_actions.size(0) != batch))) {
    throw std::invalid_argument(
        "DfTransformer: known actions need a model with the side input and shape [B or 1, " +
        std::to_string(window) + ", " + std::to_string(config_.action_input_dim + 1) + "]");
  }
  const int outcome_width = config_.outcome_input_width();
  if (outcome.defined() &&
      (!outcome_input_ || outcome.dim() != 2 || outcome.size(1) != outcome_width ||
       (outcome.size(0) != 1 && outcome.size(0) != batch))) {
    throw std::invalid_argument(
        "DfTransformer: an outcome condition needs a model with the outcome input and shape "
        "[B or 1, " +
        std::to_string(outcome_width) + "]");
  }
  if (outcome.defined()) setup.noisy = (steps >= 0).to(tokens.options()).unsqueeze(-1);
  if (config_.hidden_clean_actions > 0) setup.read = ReadMask(steps, tokens.options());
  const int64_t attended = (cache != nullptr ? cache->size() : 0) + window;
  if (attended > config_.max_positions) {
    throw std::out_of_range("DfTransformer: " + std::to_string(attended) +
                            " attended tokens exceed the model's max_positions " +
                            std::to_string(config_.max_positions));
  }
  setup.cond_batch = steps.size(0);
  const at::Device device = tokens.device();
  const at::Tensor flat_steps = steps.flatten();
  if (flat_steps.is_cpu() && MemoizableNow(conditioning_weights_)) {
    const at::Tensor host = flat_steps.to(at::kLong).contiguous();
    const std::vector<int64_t> token_steps(host.data_ptr<int64_t>(),
                                           host.data_ptr<int64_t>() + host.numel());
    const auto [lowest, highest] = std::minmax_element(token_steps.begin(), token_steps.end());
    CheckTimestepRange(*lowest, *highest);
    setup.modulation = conditioning_table_->Gather(
        token_steps, conditioning_weights_,
        [this](const at::Tensor& unique_steps) { return ConditioningRows(unique_steps); });
    setup.conditioning_generation = conditioning_table_->generation();
  } else {
    // The range check reads the timesteps on the host: free for CPU ones, a
    // synchronization for device ones (training's).
    const auto [unique_steps, inverse] = at::_unique(flat_steps, true, true);
    CheckTimestepRange(unique_steps[0].item<int64_t>(), unique_steps[-1].item<int64_t>());
    setup.unique_steps = ToDevice(unique_steps, device, at::kLong);
    setup.inverse = ToDevice(inverse, device, at::kLong);
  }

  // Window tokens sit at their absolute positions. Segments that attend with
  // an offset (sinks after eviction) get queries rotated at shifted angles.
  const int64_t first = cache != nullptr ? cache->NextPosition() : 0;
  const auto float_options = tokens.options().dtype(at::kFloat);
  const double query_scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim()));
  setup.query_angles.push_back(
      MakeWindowAngles(rotary_frequencies_, first, window, query_scale, float_options));
  std::map<int64_t, int> angles_of_offset = {{0, 0}};
  if (cache != nullptr) {
    for (int l = 0; l < config_.depth; ++l) {
      setup.segments.push_back(cache->Segments(l, batch));
    }
    for (const CacheSegment& segment : setup.segments.front()) {
      auto [entry, inserted] = angles_of_offset.emplace(
          segment.query_offset, static_cast<int>(setup.query_angles.size()));
      if (inserted) {
        setup.query_angles.push_back(MakeRotaryAngles(rotary_frequencies_,
                                                      first - segment.query_offset, window,
                                                      float_options, query_scale));
      }
      setup.segment_angles.push_back(entry->second);
    }
  } else {
    setup.segments.resize(config_.depth);
  }
  setup.future = FutureMask(window, tokens.options());
  return setup;
}

at::Tensor DfTransformerImpl::ReadMask(const at::Tensor& steps,
                                       const at::TensorOptions& options) const {
  const at::Tensor action_feature =
      at::arange(config_.token_dim, options.dtype(at::kLong)) < config_.hidden_clean_actions;
  const at::Tensor clean = (steps < 0).to(options.device()).unsqueeze(-1);
  return (~(clean & action_feature)).to(options.dtype());
}

void DfTransformerImpl::CheckTimestepRange(int64_t lowest, int64_t highest) const {
  if (lowest < -1 || highest >= config_.num_timesteps) {
    throw std::out_of_range("DfTransformer: timesteps must lie in [-1, " +
                            std::to_string(config_.num_timesteps - 1) + "]");
  }
}

at::Tensor DfTransformerImpl::ConditioningRows(const at::Tensor& steps) {
  const at::Tensor cond = F::silu(time_mlp_->forward(TimestepFeatures(steps, config_.width)));
  std::vector<at::Tensor> rows;
  for (const auto& block : blocks_) rows.push_back(block->Modulation(cond));
  at::Tensor final_rows = final_modulation_(cond);
  final_rows.narrow(1, config_.width, config_.width).add_(1);
  rows.push_back(final_rows);
  return at::cat(rows, 1);
}

at::Tensor DfTransformerImpl::Run(const ForwardSetup& setup, const at::Tensor& tokens,
                                  WindowKeysValues* window_kv, const at::Tensor& known_actions,
                                  const at::Tensor& outcome) {
  // Conditioning is computed once per distinct timestep, then gathered
  // (Prepare gathered it already when it could use the memo).
  const at::Tensor modulation =
      (setup.modulation.defined()
           ? setup.modulation
           : ConditioningRows(setup.unique_steps).index_select(0, setup.inverse))
          .view({setup.cond_batch, setup.window, -1});
  const int64_t block_columns = 6 * config_.width;
  if (window_kv != nullptr) {
    window_kv->keys.assign(blocks_.size(), at::Tensor());
    window_kv->values.assign(blocks_.size(), at::Tensor());
  }
  const std::vector<LinearCopy> copies = LinearCopies(tokens);
  at::Tensor x =
      LinearThrough(input_, setup.read.defined() ? tokens * setup.read : tokens, copies[0]);
  if (known_actions.defined()) x = x + known_action_input_(known_actions);
  if (outcome.defined()) {  // in x's type: float noisy mask times bf16 under autocast is float
    x = x + (setup.noisy * outcome_input_(outcome).unsqueeze(1)).to(x.scalar_type());
  }
  for (size_t l = 0; l < blocks_.size(); ++l) {
    BetweenBlocks::Check();  // may stop the call here (between_blocks.h)
    std::vector<CachedKeysValues> cached;
    const std::vector<CacheSegment>& segments = setup.segments[l];
    for (size_t i = 0; i < segments.size(); ++i) {
      cached.push_back({segments[i].keys, segments[i].values, setup.segment_angles[i]});
    }
    at::Tensor keys, values;
    x = blocks_[l]->Forward(x, modulation.narrow(-1, l * block_columns, block_columns),
                            setup.query_angles, setup.future, cached,
                            c10::ArrayRef<LinearCopy>(copies).slice(2 + 4 * l, 4), &keys, &values);
    if (window_kv != nullptr) {
      window_kv->keys[l] = keys;
      window_kv->values[l] = values;
    }
  }
  const auto mod = modulation
                       .narrow(-1, static_cast<int64_t>(blocks_.size()) * block_columns,
                               2 * config_.width)
                       .chunk(2, -1);
  return LinearThrough(output_, ModulatedNorm(final_norm_, x, mod[0], mod[1]), copies[1]);
}

std::vector<LinearCopy> DfTransformerImpl::LinearCopies(const at::Tensor& tokens) {
  if (!tokens.is_cpu() || !transposed_weights_->Usable()) {
    return std::vector<LinearCopy>(linear_layers_.size());
  }
  // A call of few tokens multiplies by float copies, one of many by
  // bfloat16 copies where this thread asked for them (cpu_bf16.h).
  if (tokens.size(0) * tokens.size(1) <= TransposedWeights::kMaxRows) {
    return transposed_weights_->Get(at::kFloat);
  }
  std::vector<LinearCopy> copies(linear_layers_.size());
  if (CpuBf16Products::Active()) {
    copies = transposed_weights_->Get(at::kBFloat16);
    // The token embedding and the output layer stay float.
    copies[0] = copies[1] = LinearCopy();
  }
  return copies;
}

KvCacheOptions DfTransformerImpl::CacheOptions() const {
  KvCacheOptions options;
  options.num_layers = config_.depth;
  options.num_heads = config_.heads;
  options.head_dim = config_.head_dim();
  const at::Tensor& weight = input_->weight;
  options.dtype = weight.scalar_type();
  options.device = weight.device();
  return options;
}

void DfTransformerImpl::CheckCacheOptions(const KvCacheOptions& options) const {
  const KvCacheOptions model = CacheOptions();
  auto require_equal = [](const std::string& what, const std::string& cache,
                          const std::string& expected) {
    if (cache != expected) {
      throw std::invalid_argument("DfTransformer: the KV cache has " + what + " " + cache +
                                  ", the model needs " + expected);
    }
  };
  require_equal("layers", std::to_string(options.num_layers), std::to_string(model.num_layers));
  require_equal("heads", std::to_string(options.num_heads), std::to_string(model.num_heads));
  require_equal("head_dim", std::to_string(options.head_dim), std::to_string(model.head_dim));
  require_equal("dtype", c10::toString(options.dtype), c10::toString(model.dtype));
  // A device without an index (e.g. "cuda") means the current one.
  const bool same_device = options.device.type() == model.device.type() &&
                           (!options.device.has_index() || !model.device.has_index() ||
                            options.device.index() == model.device.index());
  if (!same_device) require_equal("device", options.device.str(), model.device.str());
}

}  // namespace dfmpc::worldmodel
