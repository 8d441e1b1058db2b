// Open-loop generation with a diffusion-forcing transformer: given S clean
// context tokens, generate H tokens following a scheduling matrix.
//
// Two cache modes:
//  * kNone (the Diffusion Forcing reference algorithm): every call runs the
//    model over the whole sequence, context and all generated tokens.
//  * kExact: the context is encoded once into a KV cache; generated tokens
//    are committed to the cache's scratch region once clean; tokens after the
//    last one that changes in a call (e.g. still at level K) are skipped. Each
//    call processes only the uncommitted tokens up to the last changing one.
// Both produce the same tokens up to float rounding.
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
  // kExact, `cache` (if given) must be empty and is left holding the context
  // (scratch rolled back); otherwise a cache of exactly S + H slots is used.
  SampleResult Generate(const at::Tensor& context, int64_t batch, const SampleOptions& options,
                        KvCache* cache = nullptr) const;

 private:
  SampleResult GenerateUncached(const at::Tensor& context, int64_t batch,
                                const SampleOptions& options) const;
  SampleResult GenerateCached(const at::Tensor& context, int64_t batch,
                              const SampleOptions& options, KvCache& cache) const;

  DfTransformerImpl& model_;
  const NoiseSchedule& schedule_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SAMPLER_H_
