#include "dfmpc/worldmodel/sampler.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/StringUtil.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

// State of one generation: the noisy tokens, the schedule, the RNG and the
// known features (undefined tensors when there are none).
class Generation {
 public:
  Generation(const NoiseSchedule& schedule, const SampleOptions& options, int64_t batch,
             int64_t token_dim, at::Device device, const KnownFeatures* known,
             const at::Tensor& context)
      : schedule_(schedule),
        options_(options),
        matrix_(MakeSchedulingMatrix(options.schedule, options.num_levels, options.horizon,
                                     options.uncertainty)),
        generator_(at::detail::createCPUGenerator(options.seed)),
        device_(device) {
    tokens_ = Noise(generator_, {batch, options.horizon, token_dim}, device);
    BuildTables();
    if (context.size(1) > 0) last_context_ = context.select(1, context.size(1) - 1);
    if (known != nullptr) {
      known_mask_ = known->mask.to(device);
      known_values_ = known->values.to(device, at::kFloat);
    }
  }

  const SchedulingMatrix& matrix() const { return matrix_; }
  at::Tensor& tokens() { return tokens_; }

  // Timesteps of tokens [begin, begin + count) before call `row` (a view).
  at::Tensor Timesteps(int row, int begin, int count) const {
    return timesteps_[row].narrow(0, begin, count);
  }

  // Sets the known features of every token to their values noised to the
  // token's level before call `row`. Draws noise for all tokens, so both
  // cache modes consume the generator identically. No-op without known
  // features.
  void ImposeKnown(int row) {
    if (!known_mask_.defined()) return;
    const at::Tensor noise = Noise(generator_, tokens_.sizes(), device_);
    const at::Tensor noisy =
        NoiseSchedule::AddNoise(known_values_, noise, AlphaBars(row, 0, matrix_.horizon()));
    tokens_.copy_(at::where(known_mask_, noisy, tokens_));
  }

  // The tokens after the last call, with known features set to their values
  // exactly.
  const at::Tensor& FinalTokens() {
    if (known_mask_.defined()) tokens_.copy_(at::where(known_mask_, known_values_, tokens_));
    return tokens_;
  }

  // Draws this call's DDIM noise for every generated token (so both cache
  // modes consume the generator identically); undefined when eta = 0.
  at::Tensor CallNoise() {
    if (options_.eta == 0.0) return at::Tensor();
    return Noise(generator_, tokens_.sizes(), device_);
  }

  // Applies call `row` to tokens [begin, begin + count) given the model's
  // output for them ([B, count, d]) and this call's noise.
  void Step(int row, int begin, int count, const at::Tensor& model_out, const at::Tensor& noise) {
    const at::Tensor safe_from = step_from_[row].narrow(0, begin, count).view({1, count, 1});
    const at::Tensor to = AlphaBars(row + 1, begin, count);
    const at::Tensor moving = moving_[row].narrow(0, begin, count).view({1, count, 1});
    at::Tensor window = tokens_.narrow(1, begin, count);
    at::Tensor x0, eps;
    NoiseSchedule::ToX0AndEps(options_.prediction, window, model_out, safe_from, &x0, &eps);
    const at::Tensor stepped = NoiseSchedule::DdimStep(
        x0, eps, safe_from, to, options_.eta,
        noise.defined() ? noise.narrow(1, begin, count) : noise);
    window.copy_(at::where(moving, stepped, window));
    if (options_.chain != nullptr) LinkClean(row, begin);
  }

 private:
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

  // Alpha-bars of tokens [begin, begin + count) at their levels in row `row`,
  // as a float [1, count, 1] view.
  at::Tensor AlphaBars(int row, int begin, int count) const {
    return alpha_bars_[row].narrow(0, begin, count).view({1, count, 1});
  }

  // Timesteps, alpha-bars and moving tokens of every row, computed once so
  // that each call only takes views.
  void BuildTables() {
    const int rows = matrix_.rows(), horizon = matrix_.horizon();
    std::vector<int64_t> steps(rows * horizon);
    std::vector<double> alpha_bars(rows * horizon);
    std::vector<uint8_t> moving(rows * horizon, 0);
    for (int r = 0; r < rows; ++r) {
      for (int t = 0; t < horizon; ++t) {
        const int i = r * horizon + t;
        steps[i] = schedule_.LevelTimestep(matrix_.level(r, t), options_.num_levels);
        alpha_bars[i] = schedule_.AlphaBar(steps[i]);
        if (r + 1 < rows) moving[i] = matrix_.Changes(r, t);
      }
    }
    timesteps_ = at::tensor(steps, at::kLong).view({rows, horizon}).to(device_);
    alpha_bars_ = at::tensor(alpha_bars, at::kDouble).view({rows, horizon}).to(device_, at::kFloat);
    moving_ = at::tensor(moving, at::kByte).view({rows, horizon}).to(device_, at::kBool);
    // Unchanged tokens may sit at level 0, where x0/eps conversions divide
    // by zero; their results are masked out, so they get a harmless 0.5.
    step_from_ = at::where(moving_, alpha_bars_, at::full_like(alpha_bars_, 0.5));
  }

  const NoiseSchedule& schedule_;
  const SampleOptions& options_;
  SchedulingMatrix matrix_;
  at::Generator generator_;
  at::Device device_;
  at::Tensor tokens_;
  at::Tensor last_context_;
  at::Tensor timesteps_;   // [rows, H] int64
  at::Tensor alpha_bars_;  // [rows, H] float
  at::Tensor moving_;      // [rows, H] bool: call `row` moves the token
  at::Tensor step_from_;   // [rows, H] alpha-bar to step from (0.5 if not moving)
  at::Tensor known_mask_;    // bool, broadcastable to tokens_
  at::Tensor known_values_;  // float, broadcastable to tokens_
};

// The known-action side input of the generated tokens ([B, H, a + 1]) for a
// model that has one: a token's action counts as known when all its action
// features are. Undefined without such a model or known features.
at::Tensor KnownActions(const DfTransformerImpl& model, const KnownFeatures* known,
                        int64_t batch, int64_t horizon, at::Device device) {
  const int actions = model.config().action_input_dim;
  if (actions == 0 || known == nullptr) return at::Tensor();
  const at::Tensor mask = known->mask.dim() == 2 ? known->mask.unsqueeze(0) : known->mask;
  const at::Tensor flag = mask.narrow(2, 0, actions).all(2, true).to(device, at::kFloat);
  const at::Tensor values = known->values.narrow(2, 0, actions).to(device, at::kFloat);
  // Unknown values may be NaN (sampler.h): zero them before multiplying.
  const at::Tensor safe = at::where(flag > 0, values, at::zeros({}, values.options()));
  return KnownActionInput(safe, flag).expand({batch, horizon, actions + 1}).contiguous();
}

// Index of the last token that call `row` moves, or -1.
int LastChanging(const SchedulingMatrix& matrix, int row) {
  for (int t = matrix.horizon() - 1; t >= 0; --t) {
    if (matrix.Changes(row, t)) return t;
  }
  return -1;
}

std::vector<at::Tensor> Prefix(const std::vector<at::Tensor>& per_layer, int64_t count) {
  std::vector<at::Tensor> prefix;
  prefix.reserve(per_layer.size());
  for (const at::Tensor& t : per_layer) prefix.push_back(t.narrow(2, 0, count));
  return prefix;
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
  Generation gen(schedule_, options, batch, context.size(2), context.device(), known, context);
  const SchedulingMatrix& matrix = gen.matrix();
  const int64_t num_context = context.size(1);
  const at::Tensor context_steps =
      at::full({num_context}, -1, at::TensorOptions().dtype(at::kLong).device(context.device()));
  const at::Tensor full_context = context.expand({batch, num_context, context.size(2)});
  // Context tokens get no side input, as in the cached mode's context pass.
  at::Tensor known_actions = KnownActions(model_, known, batch, matrix.horizon(), context.device());
  if (known_actions.defined()) {
    known_actions = at::cat({at::zeros({batch, num_context, known_actions.size(2)},
                                       known_actions.options()),
                             known_actions},
                            1);
  }
  SampleStats stats;
  for (int row = 0; row < matrix.num_calls(); ++row) {
    gen.ImposeKnown(row);
    const at::Tensor noise = gen.CallNoise();
    const at::Tensor sequence = at::cat({full_context, gen.tokens()}, 1);
    const at::Tensor steps = at::cat({context_steps, gen.Timesteps(row, 0, matrix.horizon())});
    const at::Tensor out = model_.Forward(sequence, steps, nullptr, nullptr, known_actions);
    gen.Step(row, 0, matrix.horizon(), out.narrow(1, num_context, matrix.horizon()), noise);
    ++stats.calls;
    stats.token_forwards += sequence.size(1);
  }
  return SampleResult{gen.FinalTokens(), stats};
}

SampleResult Sampler::GenerateCached(const at::Tensor& context, int64_t batch,
                                     const SampleOptions& options, const KnownFeatures* known,
                                     KvCache& cache) const {
  Generation gen(schedule_, options, batch, context.size(2), context.device(), known, context);
  const SchedulingMatrix& matrix = gen.matrix();
  const at::Tensor known_actions =
      KnownActions(model_, known, batch, matrix.horizon(), context.device());
  SampleStats stats;
  if (context.size(1) > 0) {
    WindowKeysValues kv;
    const at::Tensor steps = at::full(
        {context.size(1)}, -1, at::TensorOptions().dtype(at::kLong).device(context.device()));
    model_.Forward(context, steps, &cache, &kv);
    cache.Append(kv.keys, kv.values);
    stats.token_forwards += context.size(1);
  }
  int committed = 0;  // generated tokens whose keys/values are in the cache
  for (int row = 0; row < matrix.num_calls(); ++row) {
    gen.ImposeKnown(row);
    const at::Tensor noise = gen.CallNoise();
    ++stats.calls;
    const int last = LastChanging(matrix, row);
    if (last < committed) continue;  // nothing moves in this call
    const int count = last - committed + 1;
    WindowKeysValues kv;
    const at::Tensor out = model_.Forward(
        gen.tokens().narrow(1, committed, count), gen.Timesteps(row, committed, count), &cache,
        &kv, known_actions.defined() ? known_actions.narrow(1, committed, count) : known_actions);
    stats.token_forwards += count;
    gen.Step(row, committed, count, out, noise);
    // Tokens that were already clean in this call had their final keys and
    // values computed: commit the clean prefix of the window.
    int clean = 0;
    while (clean < count && matrix.level(row, committed + clean) == 0) ++clean;
    if (clean > 0) {
      cache.AppendScratch(Prefix(kv.keys, clean), Prefix(kv.values, clean));
      committed += clean;
    }
  }
  cache.RollbackScratch();
  return SampleResult{gen.FinalTokens(), stats};
}

}  // namespace dfmpc::worldmodel
