#include "plan_denoiser.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <utility>

#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::planner {

using worldmodel::NoiseSchedule;
using worldmodel::SchedulingMatrix;
using worldmodel::WindowKeysValues;

struct PlanDenoiser::CallOutput {
  at::Tensor clean_estimate;  // [N, count, d]: x0, or the token itself where clean
  at::Tensor eps;             // [N, count, d]
  at::Tensor cost_gradient;   // [N, count, d], or undefined without guidance
  WindowKeysValues kv;        // of the plan tokens
  WindowKeysValues real_kv;   // of the newest real token (batch 1), if it led
};

namespace {

// [1, n, 1] float tensor of per-token scalars, for broadcasting over tokens.
at::Tensor PerToken(const std::vector<double>& values, const at::Device& device) {
  return at::tensor(values, at::kDouble)
      .view({1, static_cast<int64_t>(values.size()), 1})
      .to(device, at::kFloat);
}

// The first `count` tokens of every layer's keys or values, detached.
std::vector<at::Tensor> Prefix(const std::vector<at::Tensor>& per_layer, int64_t count) {
  std::vector<at::Tensor> prefix;
  prefix.reserve(per_layer.size());
  for (const at::Tensor& t : per_layer) prefix.push_back(t.narrow(2, 0, count).detach());
  return prefix;
}

// Splits the keys or values of a window led by the newest real token: the
// real token's (first candidate: all candidates hold the same token) and the
// plan tokens' views.
std::vector<at::Tensor> SplitLead(std::vector<at::Tensor>& per_layer) {
  std::vector<at::Tensor> lead;
  lead.reserve(per_layer.size());
  for (at::Tensor& t : per_layer) {
    lead.push_back(t.narrow(0, 0, 1).narrow(2, 0, 1).detach());
    t = t.narrow(2, 1, t.size(2) - 1);
  }
  return lead;
}

}  // namespace

PlanDenoiser::PlanDenoiser(worldmodel::DfTransformerImpl& model, const NoiseSchedule& schedule,
                           const DenoiseOptions& options)
    : model_(model), schedule_(schedule), options_(options) {}

PlanDenoiser::CallOutput PlanDenoiser::Call(const at::Tensor& window, const at::Tensor& timesteps,
                                            const at::Tensor& alpha_bars, const PlanBatch& plan,
                                            int begin, worldmodel::KvCache& cache,
                                            const PlanCost& cost,
                                            const at::Tensor& newest_real) const {
  const bool guide = options_.guidance_scale > 0.0;
  const at::Tensor clean = (timesteps < 0).view({1, -1, 1});
  CallOutput result;
  c10::AutoGradMode grad_mode(guide);
  const at::Tensor input = guide ? window.detach().requires_grad_(true) : window;
  at::Tensor out;
  if (newest_real.defined()) {
    const at::Tensor real = newest_real.expand({input.size(0), 1, input.size(2)});
    const at::Tensor led = at::cat({real, input}, 1);
    const at::Tensor steps = at::cat({at::full({1}, -1, timesteps.options()), timesteps});
    out = model_.Forward(led, steps, &cache, &result.kv).narrow(1, 1, input.size(1));
    result.real_kv.keys = SplitLead(result.kv.keys);
    result.real_kv.values = SplitLead(result.kv.values);
  } else {
    out = model_.Forward(input, timesteps, &cache, &result.kv);
  }
  at::Tensor x0;
  NoiseSchedule::ToX0AndEps(options_.prediction, input, out, alpha_bars, &x0, &result.eps);
  result.clean_estimate = at::where(clean, input, x0);
  if (guide) {
    // Committed tokens before the window are clean and constant.
    const at::Tensor prefix = at::cat({plan.tokens.narrow(1, 0, begin), result.clean_estimate}, 1);
    // Only the window's gradient: the caller's parameters may require
    // gradients, and their .grad must stay untouched.
    cost(prefix).sum().backward({}, /*retain_graph=*/false,
                                /*create_graph=*/false, {{input}});
    result.cost_gradient = input.grad();
    result.clean_estimate = result.clean_estimate.detach();
    result.eps = result.eps.detach();
  }
  return result;
}

DenoiseCounts PlanDenoiser::Run(const SchedulingMatrix& program, PlanBatch& plan,
                                worldmodel::KvCache& cache, at::Generator& generator,
                                const PlanCost& cost, const at::Tensor& newest_real) const {
  const at::Device device = plan.tokens.device();
  const int horizon = program.horizon();
  DenoiseCounts counts;
  at::Tensor pending = newest_real;  // until it has led a call
  int committed = 0;                 // plan tokens whose keys and values are in the scratch region
  for (int row = 0; row < program.num_calls(); ++row) {
    int last = -1;
    for (int t = horizon - 1; t >= 0 && last < 0; --t) {
      if (program.Changes(row, t)) last = t;
    }
    if (last < committed) continue;  // nothing moves in this call
    const int count = last - committed + 1;
    std::vector<int64_t> steps(count);
    std::vector<double> from(count), to(count), moving(count);
    for (int i = 0; i < count; ++i) {
      const int t = committed + i;
      steps[i] = schedule_.LevelTimestep(program.level(row, t), options_.num_levels);
      moving[i] = program.Changes(row, t) ? 1.0 : 0.0;
      // Every noisy token, moving or not, needs its own alpha-bar: its clean
      // estimate feeds scoring, guidance and plan(). Clean tokens would make
      // the x0 and eps conversions divide by zero; their estimate is the
      // token itself (Call), so they get a harmless 0.5.
      from[i] = program.level(row, t) > 0 ? schedule_.AlphaBar(steps[i]) : 0.5;
      to[i] = schedule_.AlphaBar(
          schedule_.LevelTimestep(program.level(row + 1, t), options_.num_levels));
    }
    const at::Tensor timesteps = at::tensor(steps, at::kLong).to(device);
    const at::Tensor ab_from = PerToken(from, device), ab_to = PerToken(to, device);
    at::Tensor window = plan.tokens.narrow(1, committed, count);
    CallOutput out = Call(window, timesteps, ab_from, plan, committed, cache, cost, pending);
    if (pending.defined()) {
      // Into the persistent region before any scratch commit of this step.
      cache.Append(out.real_kv.keys, out.real_kv.values);
      pending = at::Tensor();
      ++counts.token_forwards;
    }

    at::Tensor noise;
    if (options_.eta > 0.0) {
      noise =
          at::randn(window.sizes(), generator, at::TensorOptions().dtype(at::kFloat)).to(device);
    }
    at::Tensor stepped =
        NoiseSchedule::DdimStep(out.clean_estimate, out.eps, ab_from, ab_to, options_.eta, noise);
    if (out.cost_gradient.defined()) stepped -= options_.guidance_scale * out.cost_gradient;
    window.copy_(at::where(PerToken(moving, device) > 0, stepped, window));
    plan.clean_estimate.narrow(1, committed, count).copy_(out.clean_estimate);
    plan.estimated = std::max(plan.estimated, last + 1);
    ++counts.calls;
    counts.token_forwards += count;

    // Tokens clean at the start of this call had their final keys and values
    // computed: commit the clean prefix of the window.
    int clean = 0;
    while (clean < count && program.level(row, committed + clean) == 0) ++clean;
    if (clean > 0) {
      cache.AppendScratch(Prefix(out.kv.keys, clean), Prefix(out.kv.values, clean));
      committed += clean;
    }
  }
  if (pending.defined()) {  // no call ran: the token gets a forward of its own
    WindowKeysValues kv;
    model_.Forward(pending, at::full({1}, -1, at::TensorOptions(at::kLong).device(device)), &cache,
                   &kv);
    cache.Append(Prefix(kv.keys, 1), Prefix(kv.values, 1));
    ++counts.token_forwards;
  }
  return counts;
}

}  // namespace dfmpc::planner
