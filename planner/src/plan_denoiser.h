// Runs the model calls of one control step on a batch of candidate plans:
// the denoise engine (dfmpc/worldmodel/denoise_engine.h) with the planner's
// hooks.
//
// Each call moves the tokens whose level drops between two rows of a
// program (plan_schedule.h) by one DDIM step, over the context already in
// the KV cache; tokens clean when a call starts are committed to the cache's
// scratch region, which the caller rolls back after the step. The planner
// adds:
//  * the newest real token, which leads the first call's window and joins
//    the persistent context right after it: one forward serves both the
//    context update and the plan, which saves a whole forward's operator
//    overhead per control step; the token attends to exactly what it would
//    in a forward of its own;
//  * cost guidance on the window (DenoiseOptions::guidance_scale);
//  * the clean estimates of every token a call ran, kept in the plan for
//    scoring, guidance and plan().
#ifndef DFMPC_PLANNER_PLAN_DENOISER_H_
#define DFMPC_PLANNER_PLAN_DENOISER_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <functional>

#include "dfmpc/worldmodel/denoise_engine.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

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

// The spread of every draw of the planner's sampling: standard normal noise,
// the first `narrow_rows` candidates' scaled by `scale`
// (PlannerOptions::noise_scale and noise_scale_share).
struct NoiseSpread {
  double scale = 1.0;
  int64_t narrow_rows = 0;
};

// Noise [N, ...] of the given spread; the generator advances as for a
// standard normal draw of the same size, whatever the spread.
at::Tensor PlanNoise(at::Generator& generator, at::IntArrayRef sizes, at::Device device,
                     const NoiseSpread& spread);

using worldmodel::DenoiseCounts;
using worldmodel::DenoiseOptions;

class PlanDenoiser {
 public:
  // The model and schedule (and `graphs`, when given) must outlive the
  // denoiser; with `graphs` its model calls go through them.
  PlanDenoiser(worldmodel::DfTransformerImpl& model, const worldmodel::NoiseSchedule& schedule,
               const DenoiseOptions& options, const NoiseSpread& spread = {},
               worldmodel::ForwardGraphs* graphs = nullptr);

  // Applies every call of `program` (row 0 must hold the plan's current
  // levels). `cost` is used for guidance when its scale is positive.
  // `newest_real` ([1, 1, d], normalized) is appended to the context first
  // (see above); undefined for none. Its forward is counted. `may_continue`
  // and `model_call` (either may be empty) are the engine's anytime hooks
  // (DenoiseHooks).
  DenoiseCounts Run(const worldmodel::SchedulingMatrix& program, PlanBatch& plan,
                    worldmodel::KvCache& cache, at::Generator& generator, const PlanCost& cost,
                    const at::Tensor& newest_real,
                    const std::function<bool(int, int)>& may_continue = {},
                    const std::function<void(int)>& model_call = {}) const;

  // Encodes one clean real token ([1, 1, d]) after the cache's tokens and
  // appends it to the persistent region, as if it had led a call.
  void AppendReal(const at::Tensor& token, worldmodel::KvCache& cache) const {
    engine_.AppendClean(token, cache);
  }

  // Model calls per plan window (2 under outcome guidance other than 0, 1).
  int ModelCallsPerWindow() const { return engine_.ModelCallsPerWindow(); }

 private:
  worldmodel::DenoiseEngine engine_;
  NoiseSpread spread_;  // of DDIM's noise
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLAN_DENOISER_H_
