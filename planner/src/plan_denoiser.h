// Runs the model calls of one control step on a batch of candidate plans.
//
// Each call moves the tokens whose level drops between two rows of a
// program (plan_schedule.h) by one DDIM step, over the context already in
// the KV cache. As in the exact sampler, tokens that are clean when a call
// starts have their keys and values committed to the cache's scratch region
// and are not run again, and tokens after the last moving one are skipped.
// The caller rolls the scratch back after the step.
//
// The newest real token rides along: it is prepended to the window of the
// first call that runs (as a clean token, batch-broadcast), and its keys and
// values are appended to the cache's persistent region right after that
// call. One forward then serves both the context update and the plan, which
// saves a whole forward's operator overhead per control step; the token
// attends to exactly what it would in a forward of its own.
#ifndef DFMPC_PLANNER_PLAN_DENOISER_H_
#define DFMPC_PLANNER_PLAN_DENOISER_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::worldmodel {
class DfTransformerImpl;
class KvCache;
}  // namespace dfmpc::worldmodel

namespace dfmpc::planner {

// Candidate plans in normalized token space.
struct PlanBatch {
  at::Tensor tokens;  // [N, H, d], each token at its level
  // [N, H, d]: the model's latest clean estimate of every token (the token
  // itself once clean); valid for the first `estimated` tokens.
  at::Tensor clean_estimate;
  int estimated = 0;
};

// Summed cost [N] of clean plan prefixes [N, n, d] (normalized); must be
// differentiable for guidance.
using PlanCost = std::function<at::Tensor(const at::Tensor& clean_prefix)>;

struct DenoiseOptions {
  int num_levels = 8;
  worldmodel::Prediction prediction = worldmodel::Prediction::kV;
  double eta = 0.0;
  double guidance_scale = 0.0;
};

struct DenoiseCounts {
  int calls = 0;
  std::int64_t token_forwards = 0;
};

class PlanDenoiser {
 public:
  // The model and schedule must outlive the denoiser.
  PlanDenoiser(worldmodel::DfTransformerImpl& model, const worldmodel::NoiseSchedule& schedule,
               const DenoiseOptions& options);

  // Applies every call of `program` (row 0 must hold the plan's current
  // levels). `cost` is used for guidance when its scale is positive.
  // `newest_real` ([1, 1, d], normalized) is appended to the context first
  // (see above); undefined for none. Its forward is counted.
  DenoiseCounts Run(const worldmodel::SchedulingMatrix& program, PlanBatch& plan,
                    worldmodel::KvCache& cache, at::Generator& generator, const PlanCost& cost,
                    const at::Tensor& newest_real) const;

 private:
  // Model output for `window` (with the cost gradient with respect to it when
  // guiding), keys and values to commit, and clean estimates.
  // With `newest_real` defined it leads the window; its keys and values come
  // back separately and every other output covers the plan tokens only.
  struct CallOutput;
  CallOutput Call(const at::Tensor& window, const at::Tensor& timesteps,
                  const at::Tensor& alpha_bars, const PlanBatch& plan, int begin,
                  worldmodel::KvCache& cache, const PlanCost& cost,
                  const at::Tensor& newest_real) const;

  worldmodel::DfTransformerImpl& model_;
  const worldmodel::NoiseSchedule& schedule_;
  DenoiseOptions options_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLAN_DENOISER_H_
