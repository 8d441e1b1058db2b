#include "generation.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/observation_chain.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {
namespace {

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

}  // namespace

DenoiseEngine MakeEngine(DfTransformerImpl& model, const NoiseSchedule& schedule,
                         const SampleOptions& options, ForwardGraphs* graphs) {
  return DenoiseEngine(
      model, schedule,
      DenoiseOptions{options.num_levels, options.prediction, options.eta,
                     /*guidance_scale=*/0.0, options.outcome_guidance, options.target_outcome},
      graphs);
}

Generation::Generation(const DfTransformerImpl& model, const SampleOptions& options,
                       int64_t batch, const KnownFeatures* known, const at::Tensor& context)
    : options_(options),
      matrix_(MakeSchedulingMatrix(options.schedule, options.num_levels, options.horizon,
                                   options.uncertainty)),
      generator_(at::detail::createCPUGenerator(options.seed)),
      device_(context.device()) {
  tokens_ = StandardNormal(generator_, {batch, options.horizon, context.size(2)}, device_);
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
    if (options_.eta > 0.0) call_noise_ = StandardNormal(generator_, tokens_.sizes(), device_);
  };
  hooks_.noise = [this](int, int begin, int count) { return call_noise_.narrow(1, begin, count); };
  if (options.chain != nullptr) {
    hooks_.after_step = [this](int row, int begin) { LinkClean(row, begin); };
  }
}

const at::Tensor& Generation::FinalTokens() {
  if (known_mask_.defined()) tokens_.copy_(at::where(known_mask_, known_values_, tokens_));
  return tokens_;
}

void Generation::ImposeKnown(const at::Tensor& alpha_bars) {
  if (!known_mask_.defined()) return;
  const at::Tensor noise = StandardNormal(generator_, tokens_.sizes(), device_);
  const at::Tensor noisy = NoiseSchedule::AddNoise(known_values_, noise, alpha_bars);
  tokens_.copy_(at::where(known_mask_, noisy, tokens_));
}

void Generation::LinkClean(int row, int begin) {
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

}  // namespace dfmpc::worldmodel
