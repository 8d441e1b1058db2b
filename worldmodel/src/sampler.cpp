#include "dfmpc/worldmodel/sampler.h"

#include <ATen/ATen.h>
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
#include "generation.h"

namespace dfmpc::worldmodel {
namespace {

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
