#include "plan_denoiser.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "dfmpc/worldmodel/device.h"

namespace dfmpc::planner {

at::Tensor PlanNoise(at::Generator& generator, at::IntArrayRef sizes, at::Device device,
                     const NoiseSpread& spread) {
  at::Tensor noise = worldmodel::StandardNormal(generator, sizes, device);
  const int64_t rows = std::min(spread.narrow_rows, noise.size(0));
  if (spread.scale != 1.0 && rows > 0) noise.narrow(0, 0, rows).mul_(spread.scale);
  return noise;
}

PlanDenoiser::PlanDenoiser(worldmodel::DfTransformerImpl& model,
                           const worldmodel::NoiseSchedule& schedule, const DenoiseOptions& options,
                           const NoiseSpread& spread, worldmodel::ForwardGraphs* graphs)
    : engine_(model, schedule, options, graphs), spread_(spread) {}

DenoiseCounts PlanDenoiser::Run(const worldmodel::SchedulingMatrix& program, PlanBatch& plan,
                                worldmodel::KvCache& cache, at::Generator& generator,
                                const PlanCost& cost, const at::Tensor& newest_real,
                                const std::function<bool(int, int)>& may_continue,
                                const std::function<void(int)>& model_call) const {
  worldmodel::DenoiseHooks hooks;
  // Drawn per window, after its forward: the planner's generator advances
  // only by what the calls that run use.
  hooks.noise = [this, &plan, &generator](int, int, int count) {
    return PlanNoise(generator, {plan.tokens.size(0), count, plan.tokens.size(2)},
                     plan.tokens.device(), spread_);
  };
  hooks.cost = cost;
  hooks.estimates = [&plan](int begin, const at::Tensor& estimates) {
    const int count = static_cast<int>(estimates.size(1));
    plan.clean_estimate.narrow(1, begin, count).copy_(estimates);
    plan.estimated = std::max(plan.estimated, begin + count);
  };
  hooks.may_continue = may_continue;
  hooks.model_call = model_call;
  return engine_.Run(program, plan.tokens, cache, hooks, newest_real);
}

}  // namespace dfmpc::planner
