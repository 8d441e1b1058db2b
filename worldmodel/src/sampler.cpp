#include "dfmpc/worldmodel/sampler.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/StringUtil.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "dfmpc/worldmodel/denoise_engine.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/observation_chain.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {
namespace {

// Draws standard normal noise on the CPU (so a seed gives the same numbers
// on every device) and moves it to `device`.
at::Tensor Noise(at::Generator& generator, at::IntArrayRef sizes, at::Device device) {
  return at::randn(sizes, generator, at::TensorOptions().dtype(at::kFloat)).to(device);
}

std::string ShapeName(const at::Tensor& tensor) {
  return tensor.defined() ? c10::str(tensor.sizes()) : "none";
}

// True when `tensor` is [1 or batch, horizon, dim], or [horizon, dim] if
// `allow_unbatched`.
bool FitsTokens(const at::Tensor& tensor, int64_t batch, int64_t horizon, int64_t dim,
                bool allow_unbatched) {
  if (!tensor.defined()) return false;
  if (allow_unbatched && tensor.dim() == 2) {
    return tensor.size(0) == horizon && tensor.size(1) == dim;
  }
  return tensor.dim() == 3 && (tensor.size(0) == 1 || tensor.size(0) == batch) &&
         tensor.size(1) == horizon && tensor.size(2) == dim;
}

// Throws std::invalid_argument unless `known` describes features of `batch`
// candidates of `horizon` tokens of dimension `dim`, with finite known values.
void CheckKnown(const KnownFeatures& known, int64_t batch, int64_t horizon, int64_t dim) {
  const std::string tokens = std::to_string(horizon) + ", " + std::to_string(dim) + "]";
  const std::string batched = "[1 or B, H, d] = [1 or " + std::to_string(batch) + ", " + tokens;
  if (!FitsTokens(known.mask, batch, horizon, dim, /*allow_unbatched=*/true)) {
    throw std::invalid_argument("Sampler: known mask must be [H, d] = [" + tokens + " or " +
                                batched + ", got " + ShapeName(known.mask));
  }
  if (known.mask.scalar_type() != at::kBool) {
    throw std::invalid_argument("Sampler: known mask must have dtype bool, got " +
                                std::string(c10::toString(known.mask.scalar_type())));
  }
  if (!FitsTokens(known.values, batch, horizon, dim, /*allow_unbatched=*/false)) {
    throw std::invalid_argument("Sampler: known values must be " + batched + ", got " +
                                ShapeName(known.values));
  }
  if (!at::isFloatingType(known.values.scalar_type())) {
    throw std::invalid_argument("Sampler: known values must be floating point, got " +
                                std::string(c10::toString(known.values.scalar_type())));
  }
  const at::Tensor mask = known.mask.to(known.values.device());
  if (!at::isfinite(known.values).logical_or(mask.logical_not()).all().item<bool>()) {
    throw std::invalid_argument("Sampler: known values contain NaN or infinite values");
  }
}

// The known-action side input of the generated tokens ([B, H, a + 1]) for a
// model that has one: a token's action counts as known when all its action
// features are. Undefined without such a model or known features.
at::Tensor KnownActions(const DfTransformerImpl& model, const KnownFeatures* known, int64_t batch,
                        int64_t horizon, at::Device device) {
  const int actions = model.config().action_input_dim;
  if (actions == 0 || known == nullptr) return at::Tensor();
  const at::Tensor mask = known->mask.dim() == 2 ? known->mask.unsqueeze(0) : known->mask;
  const at::Tensor flag = mask.narrow(2, 0, actions).all(2, true).to(device, at::kFloat);
  const at::Tensor values = known->values.narrow(2, 0, actions).to(device, at::kFloat);
  // Unknown values may be NaN (sampler.h): zero them before multiplying.
  const at::Tensor safe = at::where(flag > 0, values, at::zeros({}, values.options()));
  return KnownActionInput(safe, flag).expand({batch, horizon, actions + 1}).contiguous();
}

// What a generation adds to the denoise engine: the noisy tokens, the RNG,
// the known features (undefined tensors when there are none) and the
// observation chain, as the engine's hooks.
class Generation {
 public:
  Generation(const DfTransformerImpl& model, const SampleOptions& options, int64_t batch,
             const KnownFeatures* known, const at::Tensor& context)
      : options_(options),
        matrix_(MakeSchedulingMatrix(options.schedule, options.num_levels, options.horizon,
                                     options.uncertainty)),
        generator_(at::detail::createCPUGenerator(options.seed)),
        device_(context.device()) {
    tokens_ = Noise(generator_, {batch, options.horizon, context.size(2)}, device_);
    if (context.size(1) > 0) last_context_ = context.select(1, context.size(1) - 1);
    if (known != nullptr) {
      known_mask_ = known->mask.to(device_);
      known_values_ = known->values.to(device_, at::kFloat);
    }
    hooks_.known_actions = KnownActions(model, known, batch, options.horizon, device_);
    // Known features and DDIM noise are drawn for all H tokens before every
    // call, so both cache modes consume the generator identically.
    hooks_.before_call = [this](int, const at::Tensor& alpha_bars) {
      ImposeKnown(alpha_bars);
      if (options_.eta > 0.0) call_noise_ = Noise(generator_, tokens_.sizes(), device_);
    };
    hooks_.noise = [this](int, int begin, int count) {
      return call_noise_.narrow(1, begin, count);
    };
    if (options.chain != nullptr) {
      hooks_.after_step = [this](int row, int begin) { LinkClean(row, begin); };
    }
  }
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  const SchedulingMatrix& matrix() const { return matrix_; }
  const at::Tensor& tokens() const { return tokens_; }
  const DenoiseHooks& hooks() const { return hooks_; }

  // The tokens after the last call, with known features set to their values
  // exactly.
  const at::Tensor& FinalTokens() {
    if (known_mask_.defined()) tokens_.copy_(at::where(known_mask_, known_values_, tokens_));
    return tokens_;
  }

 private:
  // Sets the known features of every token to their values noised to the
  // tokens' `alpha_bars` ([1, H, 1]). No-op without known features.
  void ImposeKnown(const at::Tensor& alpha_bars) {
    if (!known_mask_.defined()) return;
    const at::Tensor noise = Noise(generator_, tokens_.sizes(), device_);
    const at::Tensor noisy = NoiseSchedule::AddNoise(known_values_, noise, alpha_bars);
    tokens_.copy_(at::where(known_mask_, noisy, tokens_));
  }

  // Links each token that call `row` made clean to its predecessor, in
  // token order, and relinks the clean tokens right after a changed one
  // (schedules such as the trapezoid finish later tokens first). Tokens
  // before `begin` are clean and unchanged.
  void LinkClean(int row, int begin) {
    bool previous_changed = false;
    for (int t = begin; t < matrix_.horizon(); ++t) {
      if (matrix_.level(row + 1, t) != 0) {
        previous_changed = false;
        continue;
      }
      const bool changed = previous_changed || matrix_.Changes(row, t);
      if (changed && (t > 0 || last_context_.defined())) {
        const at::Tensor previous = t == 0 ? last_context_ : tokens_.select(1, t - 1);
        options_.chain->Link(previous, tokens_.select(1, t));
      }
      previous_changed = changed;
    }
  }

  const SampleOptions& options_;
  SchedulingMatrix matrix_;
  at::Generator generator_;
  at::Device device_;
  at::Tensor tokens_;
  at::Tensor last_context_;
  at::Tensor known_mask_;    // bool, broadcastable to tokens_
  at::Tensor known_values_;  // float, broadcastable to tokens_
  at::Tensor call_noise_;    // this call's DDIM noise of all H tokens (eta > 0)
  DenoiseHooks hooks_;
};

DenoiseEngine MakeEngine(DfTransformerImpl& model, const NoiseSchedule& schedule,
                         const SampleOptions& options) {
  return DenoiseEngine(model, schedule,
                       DenoiseOptions{options.num_levels, options.prediction, options.eta,
                                      /*guidance_scale=*/0.0});
}

// Empties a cache (which was empty before) when destroyed, unless dismissed
// first: an exception then leaves the cache as the caller gave it.
class ClearOnUnwind {
 public:
  explicit ClearOnUnwind(KvCache& cache) : cache_(cache) {}
  ClearOnUnwind(const ClearOnUnwind&) = delete;
  ClearOnUnwind& operator=(const ClearOnUnwind&) = delete;
  ~ClearOnUnwind() {
    if (!dismissed_) cache_.Clear();
  }
  void Dismiss() { dismissed_ = true; }

 private:
  KvCache& cache_;
  bool dismissed_ = false;
};

}  // namespace

CacheMode ParseCacheMode(const std::string& name) {
  if (name == "none") return CacheMode::kNone;
  if (name == "exact") return CacheMode::kExact;
  throw std::invalid_argument("unknown cache mode '" + name + "' (expected none or exact)");
}

std::string CacheModeName(CacheMode mode) {
  return mode == CacheMode::kNone ? "none" : "exact";
}

Sampler::Sampler(DfTransformerImpl& model, const NoiseSchedule& schedule)
    : model_(model), schedule_(schedule) {
  if (model.config().num_timesteps != schedule.num_timesteps()) {
    throw std::invalid_argument("Sampler: model trained for " +
                                std::to_string(model.config().num_timesteps) +
                                " timesteps, schedule has " +
                                std::to_string(schedule.num_timesteps()));
  }
}

SampleResult Sampler::Generate(const at::Tensor& context, int64_t batch,
                               const SampleOptions& options, KvCache* cache,
                               const KnownFeatures* known) const {
  const int64_t dim = model_.config().token_dim;
  // Cache batches are int.
  if (batch < 1 || batch > std::numeric_limits<int>::max()) {
    throw std::invalid_argument("Sampler: batch must be in [1, " +
                                std::to_string(std::numeric_limits<int>::max()) + "], got " +
                                std::to_string(batch));
  }
  if (!context.defined() || context.dim() != 3 || context.size(2) != dim ||
      (context.size(0) != 1 && context.size(0) != batch)) {
    throw std::invalid_argument(
        "Sampler: context must be [1 or batch, S, " + std::to_string(dim) +
        "], got " + (context.defined() ? std::to_string(context.dim()) + "-d tensor" : "none") +
        (context.defined() && context.dim() > 0
             ? " with last size " + std::to_string(context.size(-1))
             : ""));
  }
  if (!at::isfinite(context).all().item<bool>()) {
    throw std::invalid_argument("Sampler: context contains NaN or infinite values");
  }
  if (!(options.eta >= 0.0)) throw std::invalid_argument("Sampler: eta must be >= 0");
  // Validates K, H and u before any model work.
  MakeSchedulingMatrix(options.schedule, options.num_levels, options.horizon,
                       options.uncertainty);
  schedule_.LevelTimestep(0, options.num_levels);  // K against the training timesteps
  if (known != nullptr) CheckKnown(*known, batch, options.horizon, dim);
  if (options.chain != nullptr && options.chain->token_dim() != dim) {
    throw std::invalid_argument("Sampler: observation chain is for " +
                                std::to_string(options.chain->token_dim()) +
                                "-feature tokens, the model's have " + std::to_string(dim));
  }

  c10::InferenceMode inference;
  const at::Tensor ctx = context.to(model_.CacheOptions().device, at::kFloat);
  if (options.cache_mode == CacheMode::kNone) {
    return GenerateUncached(ctx, batch, options, known);
  }

  if (cache == nullptr) {
    KvCacheOptions cache_options = model_.CacheOptions();
    cache_options.capacity = std::max<int>(1, static_cast<int>(ctx.size(1)));
    cache_options.scratch_capacity = options.horizon;
    cache_options.persistent_batch = static_cast<int>(ctx.size(0));
    cache_options.scratch_batch = static_cast<int>(batch);
    KvCache own(cache_options);
    return GenerateCached(ctx, batch, options, known, own);
  }
  const KvCacheOptions& co = cache->options();
  model_.CheckCacheOptions(co);
  if (cache->persistent_size() != 0 || cache->scratch_size() != 0) {
    throw std::invalid_argument("Sampler: the cache passed to Generate must be empty");
  }
  // An evicting cache would drop context tokens, and the result would no
  // longer be the exact one.
  if (ctx.size(1) > co.capacity) {
    throw std::length_error("Sampler: context of " + std::to_string(ctx.size(1)) +
                            " tokens exceeds the cache's capacity of " +
                            std::to_string(co.capacity) + (co.evict ? " (it would evict)" : ""));
  }
  if (co.scratch_capacity < options.horizon || co.scratch_batch < batch ||
      co.persistent_batch != ctx.size(0)) {
    throw std::invalid_argument(
        "Sampler: cache needs scratch capacity >= H, scratch batch >= batch and a persistent "
        "batch equal to the context's");
  }
  // Strong guarantee: whatever throws below leaves the cache empty, as given.
  ClearOnUnwind guard(*cache);
  SampleResult result = GenerateCached(ctx, batch, options, known, *cache);
  guard.Dismiss();
  return result;
}

SampleResult Sampler::GenerateUncached(const at::Tensor& context, int64_t batch,
                                       const SampleOptions& options,
                                       const KnownFeatures* known) const {
  Generation gen(model_, options, batch, known, context);
  const DenoiseCounts counts = MakeEngine(model_, schedule_, options)
                                   .RunUncached(gen.matrix(), gen.tokens(), context, gen.hooks());
  return SampleResult{gen.FinalTokens(), SampleStats{counts.calls, counts.token_forwards}};
}

SampleResult Sampler::GenerateCached(const at::Tensor& context, int64_t batch,
                                     const SampleOptions& options, const KnownFeatures* known,
                                     KvCache& cache) const {
  Generation gen(model_, options, batch, known, context);
  const DenoiseEngine engine = MakeEngine(model_, schedule_, options);
  SampleStats stats;
  if (context.size(1) > 0) stats.token_forwards += engine.AppendClean(context, cache);
  stats.token_forwards += engine.Run(gen.matrix(), gen.tokens(), cache, gen.hooks()).token_forwards;
  // Every call counts, also those that ran nothing, as in the uncached mode.
  stats.calls = gen.matrix().num_calls();
  cache.RollbackScratch();
  return SampleResult{gen.FinalTokens(), stats};
}

}  // namespace dfmpc::worldmodel
