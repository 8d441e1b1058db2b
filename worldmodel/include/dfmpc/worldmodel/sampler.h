// Open-loop generation with a diffusion-forcing transformer: given S clean
// context tokens, generate H tokens following a scheduling matrix.
//
// Two cache modes, both run by the denoise engine (denoise_engine.h):
//  * kNone (the Diffusion Forcing reference algorithm): every call runs the
//    model over the whole sequence, context and all generated tokens.
//  * kExact: the context is encoded once into a KV cache; generated tokens
//    are committed to the cache's scratch region once clean; tokens after the
//    last one that changes in a call (e.g. still at level K) are skipped. Each
//    call processes only the uncommitted tokens up to the last changing one.
// Both produce the same tokens up to float rounding.
//
// Known features (inpainting): features of generated tokens whose values are
// given, e.g. the real future actions when evaluating dynamics, or a goal
// observation. Before every call each known feature is set to its value
// noised to the token's current level, sqrt(ab) * value + sqrt(1 - ab) *
// noise, with noise drawn for all H tokens in both cache modes; after the last
// call it is set to its value exactly. Clean tokens thus hold their known
// values when the exact cache commits them, and tokens it skips get the same
// imposition as in kNone, so the two modes still agree. A model with the
// known-action input (transformer.h) also gets, for every generated token
// whose action features are all known, the exact action through it.
#ifndef DFMPC_WORLDMODEL_SAMPLER_H_
#define DFMPC_WORLDMODEL_SAMPLER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::worldmodel {

class DfTransformerImpl;
class KvCache;
class ObservationChain;

enum class CacheMode { kNone, kExact };
CacheMode ParseCacheMode(const std::string& name);
std::string CacheModeName(CacheMode mode);

struct SampleOptions {
  ScheduleKind schedule = ScheduleKind::kPyramid;
  int num_levels = 16;       // K
  int horizon = 8;           // H
  double uncertainty = 1.0;  // u, for pyramid and trapezoid
  double eta = 0.0;          // 0: deterministic DDIM
  CacheMode cache_mode = CacheMode::kExact;
  Prediction prediction = Prediction::kV;
  uint64_t seed = 0;
  // Classifier-free guidance toward an outcome quantile, for a model with
  // the outcome input (denoise_engine.h); 0: unconditioned.
  double outcome_guidance = 0.0;
  double target_outcome = 0.9;
  // If given, each generated token is linked to the one before it (the last
  // context token for the first) when it becomes clean, before any later
  // call sees it (observation_chain.h); the first token is left alone
  // without context. Must outlive Generate.
  const ObservationChain* chain = nullptr;
};

// mask: bool [H, d] or [1 or B, H, d], true where the feature is known.
// values: floating [1 or B, H, d] in normalized token space; entries where
// the mask is false are ignored (they may hold anything, NaN included).
struct KnownFeatures {
  at::Tensor mask;
  at::Tensor values;
};

struct SampleStats {
  int calls = 0;               // sampling calls (rows of the matrix minus one)
  int64_t token_forwards = 0;  // tokens run through the model, per candidate
};

struct SampleResult {
  at::Tensor tokens;  // [B, H, d]
  SampleStats stats;
};

class Sampler {
 public:
  // The model and schedule must outlive the sampler.
  Sampler(DfTransformerImpl& model, const NoiseSchedule& schedule);

  // context: [1 or B, S, d] (S may be 0); batch B >= 1 candidates. With
  // kExact, `cache` (if given) must be empty, built for this model
  // (DfTransformerImpl::CheckCacheOptions) with room for the S context
  // tokens without evicting, and is left holding the context (scratch rolled
  // back); if anything throws it is left as it was. Without a cache,
  // one of exactly S + H slots is used. `known` (if given) conditions the
  // generated tokens on known features; its shapes are checked against B, H
  // and d. Throws std::invalid_argument for bad shapes, dtypes, non-finite
  // values or K above the schedule's timesteps, std::length_error for a
  // context longer than the cache's capacity.
  SampleResult Generate(const at::Tensor& context, int64_t batch, const SampleOptions& options,
                        KvCache* cache = nullptr, const KnownFeatures* known = nullptr) const;

 private:
  SampleResult GenerateUncached(const at::Tensor& context, int64_t batch,
                                const SampleOptions& options, const KnownFeatures* known) const;
  SampleResult GenerateCached(const at::Tensor& context, int64_t batch,
                              const SampleOptions& options, const KnownFeatures* known,
                              KvCache& cache) const;

  DfTransformerImpl& model_;
  const NoiseSchedule& schedule_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SAMPLER_H_
