#include "dfmpc/worldmodel/denoise_engine.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/forward_graphs.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {
namespace {

// Tokens [begin, begin + count) of row `row` of a [rows, H] table, as a
// [1, count, 1] view that broadcasts over candidates and features.
at::Tensor PerToken(const at::Tensor& table, int row, int begin, int count) {
  return table[row].narrow(0, begin, count).view({1, count, 1});
}

// The first `count` tokens of every layer's keys or values, detached.
std::vector<at::Tensor> Prefix(const std::vector<at::Tensor>& per_layer, int64_t count) {
  std::vector<at::Tensor> prefix;
  prefix.reserve(per_layer.size());
  for (const at::Tensor& t : per_layer) prefix.push_back(t.narrow(2, 0, count).detach());
  return prefix;
}

// Splits the keys or values of a window led by `count` clean tokens: returns
// the leading tokens' (first candidate: all candidates hold the same ones)
// and leaves the rest's views in `per_layer`.
std::vector<at::Tensor> SplitLead(std::vector<at::Tensor>& per_layer, int64_t count) {
  std::vector<at::Tensor> lead;
  lead.reserve(per_layer.size());
  for (at::Tensor& t : per_layer) {
    lead.push_back(t.narrow(0, 0, 1).narrow(2, 0, count).detach());
    t = t.narrow(2, count, t.size(2) - count);
  }
  return lead;
}

// The tokens whose level differs between rows `row` and `target` of
// `program` ([H] bool on `device`) and the last of them (-1 for none).
struct Jump {
  at::Tensor moving;
  int last_moving = -1;
};

// The last token whose level differs between rows `row` and `target`, or -1.
int LastMoving(const SchedulingMatrix& program, int row, int target) {
  for (int t = program.horizon() - 1; t >= 0; --t) {
    if (program.level(row, t) != program.level(target, t)) return t;
  }
  return -1;
}

Jump JumpTo(const SchedulingMatrix& program, int row, int target, at::Device device) {
  Jump jump;
  std::vector<uint8_t> moves(program.horizon(), 0);
  for (int t = 0; t < program.horizon(); ++t) {
    if (program.level(row, t) != program.level(target, t)) moves[t] = 1;
  }
  jump.last_moving = LastMoving(program, row, target);
  jump.moving = ToDevice(at::tensor(moves, at::kByte), device, at::kBool);
  return jump;
}

}  // namespace

// Per-program tables, built once per program so that each call only takes
// views.
struct DenoiseEngine::Tables {
  Tables(const SchedulingMatrix& program, const NoiseSchedule& schedule, int num_levels,
         at::Device device);

  SchedulingMatrix program;
  at::Device device;
  // [rows, H] int64 on the CPU: of each token's level. The model reads
  // timesteps on the host (a CUDA model without waiting for the GPU).
  at::Tensor timesteps;
  at::Tensor alpha_bars;  // [rows, H] float: of each token's level
  // [rows, H] float: alpha-bars the x0 and eps conversions and the step start
  // from. Clean tokens would divide by zero; they are their own estimate and
  // do not move, so they get a harmless 0.5.
  at::Tensor from;
  at::Tensor clean;              // [rows, H] bool: at level 0
  at::Tensor moving;             // [rows, H] bool: call `row` moves the token
  std::vector<int> last_moving;  // per call: the last token it moves, or -1
};

DenoiseEngine::Tables::Tables(const SchedulingMatrix& program, const NoiseSchedule& schedule,
                              int num_levels, at::Device device)
    : program(program), device(device) {
  const int rows = program.rows(), horizon = program.horizon();
  std::vector<int64_t> steps(rows * horizon);
  std::vector<double> alpha(rows * horizon), start(rows * horizon);
  std::vector<uint8_t> is_clean(rows * horizon), moves(rows * horizon, 0);
  last_moving.assign(program.num_calls(), -1);
  for (int r = 0; r < rows; ++r) {
    for (int t = 0; t < horizon; ++t) {
      const int i = r * horizon + t;
      steps[i] = schedule.LevelTimestep(program.level(r, t), num_levels);
      alpha[i] = schedule.AlphaBar(steps[i]);
      is_clean[i] = program.level(r, t) == 0;
      start[i] = is_clean[i] ? 0.5 : alpha[i];
      if (r < program.num_calls() && program.Changes(r, t)) {
        moves[i] = 1;
        last_moving[r] = t;
      }
    }
  }
  auto table = [&](auto& values, at::ScalarType stored, at::ScalarType type) {
    return ToDevice(at::tensor(values, stored).view({rows, horizon}), device, type);
  };
  timesteps = at::tensor(steps, at::kLong).view({rows, horizon});
  alpha_bars = table(alpha, at::kDouble, at::kFloat);
  from = table(start, at::kDouble, at::kFloat);
  clean = table(is_clean, at::kByte, at::kBool);
  moving = table(moves, at::kByte, at::kBool);
}

struct DenoiseEngine::Estimate {
  at::Tensor x0;             // [N, count, d]: from the model's output
  at::Tensor eps;            // [N, count, d]
  at::Tensor clean;          // x0, or the token itself where clean; only when used
  at::Tensor cost_gradient;  // undefined without guidance
};

DenoiseEngine::DenoiseEngine(DfTransformerImpl& model, const NoiseSchedule& schedule,
                             const DenoiseOptions& options, ForwardGraphs* graphs)
    : model_(model), schedule_(schedule), options_(options), graphs_(graphs) {
  const double weight = options.outcome_guidance, target = options.target_outcome;
  if (!(std::isfinite(weight) && weight >= 0.0)) {
    throw std::invalid_argument("DenoiseEngine: outcome guidance must be >= 0, got " +
                                std::to_string(weight));
  }
  if (!(target >= 0.0 && target <= 1.0)) {
    throw std::invalid_argument("DenoiseEngine: the target outcome is a quantile in [0, 1], got " +
                                std::to_string(target));
  }
  if (weight > 0.0 && !model.config().outcome_input) {
    throw std::invalid_argument(
        "DenoiseEngine: outcome guidance needs a model trained with the outcome condition "
        "(dfmpc train --outcome-condition)");
  }
  const TransformerConfig& config = model.config();
  if (config.outcome_guidance_input() && weight > config.max_outcome_guidance) {
    throw std::invalid_argument("DenoiseEngine: outcome guidance " + std::to_string(weight) +
                                " exceeds the " + std::to_string(config.max_outcome_guidance) +
                                " this model was distilled for");
  }
  if (weight > 0.0) {
    const at::Tensor quantile = at::full({1}, target, at::kFloat);
    const at::Tensor weights =
        config.outcome_guidance_input() ? at::full({1}, weight, at::kFloat) : at::Tensor();
    outcome_condition_ = ToDevice(OutcomeInput(quantile, at::ones({1}), weights),
                                  model.parameters().front().device(), at::kFloat);
  }
}

bool DenoiseEngine::GuidedInOneCall() const {
  const double weight = options_.outcome_guidance;
  return weight == 0.0 || weight == 1.0 || model_.config().outcome_guidance_input();
}

int DenoiseEngine::ModelCallsPerWindow() const { return GuidedInOneCall() ? 1 : 2; }

const DenoiseEngine::Tables& DenoiseEngine::TablesFor(const SchedulingMatrix& program,
                                                      at::Device device) const {
  if (!tables_ || tables_->device != device || !(tables_->program == program)) {
    tables_ = std::make_shared<const Tables>(program, schedule_, options_.num_levels, device);
  }
  return *tables_;
}

at::Tensor DenoiseEngine::CachedForward(const at::Tensor& tokens, const at::Tensor& timesteps,
                                        const KvCache& cache, WindowKeysValues* window_kv,
                                        const at::Tensor& known_actions,
                                        const at::Tensor& outcome) const {
  if (graphs_ != nullptr) {
    return graphs_->Forward(tokens, timesteps, &cache, window_kv, known_actions, outcome);
  }
  return model_.Forward(tokens, timesteps, &cache, window_kv, known_actions, outcome);
}

at::Tensor DenoiseEngine::Guided(ModelCall call, WindowKeysValues* window_kv) const {
  const double weight = options_.outcome_guidance;
  if (weight == 0.0) return call(at::Tensor(), window_kv);
  // A CFG-aware model's condition carries the weight (OutcomeInput).
  const at::Tensor conditioned = call(outcome_condition_, window_kv);
  if (GuidedInOneCall()) return conditioned;
  const at::Tensor unconditioned = call(at::Tensor(), nullptr);
  return at::lerp(unconditioned, conditioned, weight);
}

void DenoiseEngine::CheckHooks(const DenoiseHooks& hooks) const {
  if (options_.eta > 0.0 && !hooks.noise) {
    throw std::invalid_argument("DenoiseEngine: eta > 0 needs a noise hook");
  }
  if (options_.guidance_scale > 0.0 && !hooks.cost) {
    throw std::invalid_argument("DenoiseEngine: guidance needs a cost hook");
  }
}

DenoiseEngine::Estimate DenoiseEngine::Evaluate(const Tables& tables, int row, int begin, int count,
                                                const at::Tensor& tokens, const DenoiseHooks& hooks,
                                                Forward forward) const {
  const bool guide = options_.guidance_scale > 0.0;
  const at::Tensor window = tokens.narrow(1, begin, count);
  Estimate estimate;
  c10::AutoGradMode grad_mode(guide);
  const at::Tensor input = guide ? window.detach().requires_grad_(true) : window;
  NoiseSchedule::ToX0AndEps(options_.prediction, input, forward(input),
                            PerToken(tables.from, row, begin, count), &estimate.x0, &estimate.eps);
  if (guide || hooks.estimates) {
    estimate.clean = at::where(PerToken(tables.clean, row, begin, count), input, estimate.x0);
  }
  if (!guide) return estimate;
  // Tokens before the window are clean and constant.
  const at::Tensor prefix = at::cat({tokens.narrow(1, 0, begin), estimate.clean}, 1);
  // Only the window's gradient: the model's parameters may require
  // gradients, and their .grad must stay untouched.
  hooks.cost(prefix).sum().backward({}, /*retain_graph=*/false, /*create_graph=*/false, {input});
  estimate.cost_gradient = input.grad();
  estimate.x0 = estimate.x0.detach();
  estimate.eps = estimate.eps.detach();
  estimate.clean = estimate.clean.detach();
  return estimate;
}

void DenoiseEngine::Step(const Tables& tables, int row, int target, const at::Tensor& moving,
                         int begin, int count, const at::Tensor& tokens, const DenoiseHooks& hooks,
                         const Estimate& estimate) const {
  const at::Tensor noise = options_.eta > 0.0 ? hooks.noise(row, begin, count) : at::Tensor();
  at::Tensor stepped = NoiseSchedule::DdimStep(
      estimate.x0, estimate.eps, PerToken(tables.from, row, begin, count),
      PerToken(tables.alpha_bars, target, begin, count), options_.eta, noise);
  if (estimate.cost_gradient.defined()) stepped -= options_.guidance_scale * estimate.cost_gradient;
  at::Tensor window = tokens.narrow(1, begin, count);
  window.copy_(at::where(moving, stepped, window));
  if (hooks.estimates) hooks.estimates(begin, estimate.clean);
  if (hooks.after_step) hooks.after_step(row, begin);
}

DenoiseCounts DenoiseEngine::Run(const SchedulingMatrix& program, const at::Tensor& tokens,
                                 KvCache& cache, const DenoiseHooks& hooks,
                                 const at::Tensor& lead) const {
  CheckHooks(hooks);
  if (lead.defined() && hooks.known_actions.defined()) {
    throw std::invalid_argument("DenoiseEngine: a lead token cannot take known actions");
  }
  const Tables& tables = TablesFor(program, tokens.device());
  DenoiseCounts counts;
  at::Tensor pending = lead;  // until it has led a call
  int committed = 0;          // tokens whose keys and values are in the scratch region
  for (int row = 0; row < program.num_calls(); ++row) {
    if (hooks.before_call) {
      hooks.before_call(row, PerToken(tables.alpha_bars, row, 0, program.horizon()));
    }
    const int lead_tokens = pending.defined() ? static_cast<int>(pending.size(1)) : 0;
    if (hooks.may_continue && row + 1 < program.num_calls() &&
        tables.last_moving[row] >= committed) {
      const int jump_last = LastMoving(program, row, program.rows() - 1);
      counts.cut_short = !hooks.may_continue(tables.last_moving[row] - committed + 1 + lead_tokens,
                                             jump_last - committed + 1 + lead_tokens);
    }
    const int target = counts.cut_short ? program.rows() - 1 : row + 1;
    const Jump jump = counts.cut_short ? JumpTo(program, row, target, tokens.device()) : Jump{};
    const int last = counts.cut_short ? jump.last_moving : tables.last_moving[row];
    if (last < committed) {  // nothing moves in this call
      if (counts.cut_short) break;
      continue;
    }
    const int count = last - committed + 1;
    if (hooks.model_call) hooks.model_call(count + lead_tokens);
    const at::Tensor steps = tables.timesteps[row].narrow(0, committed, count);
    WindowKeysValues kv, lead_kv;
    const Estimate estimate =
        Evaluate(tables, row, committed, count, tokens, hooks, [&](const at::Tensor& input) {
          if (!pending.defined()) {
            const at::Tensor& known = hooks.known_actions;
            const at::Tensor window_known =
                known.defined() ? known.narrow(1, committed, count) : known;
            return Guided(
                [&](const at::Tensor& outcome, WindowKeysValues* window_kv) {
                  return CachedForward(input, steps, cache, window_kv, window_known, outcome);
                },
                &kv);
          }
          const int64_t n = pending.size(1);
          const at::Tensor led =
              at::cat({pending.expand({input.size(0), n, input.size(2)}), input}, 1);
          const at::Tensor led_steps = at::cat({at::full({n}, -1, steps.options()), steps});
          const at::Tensor out =
              Guided(
                  [&](const at::Tensor& outcome, WindowKeysValues* window_kv) {
                    return CachedForward(led, led_steps, cache, window_kv, at::Tensor(), outcome);
                  },
                  &kv)
                  .narrow(1, n, count);
          lead_kv.keys = SplitLead(kv.keys, n);
          lead_kv.values = SplitLead(kv.values, n);
          return out;
        });
    if (pending.defined()) {
      // Into the persistent region before any scratch commit, and after the
      // guidance's backward pass, which reads the cache's storage.
      cache.Append(lead_kv.keys, lead_kv.values);
      counts.token_forwards += pending.size(1) * ModelCallsPerWindow();
      pending = at::Tensor();
    }
    const at::Tensor moving = counts.cut_short
                                  ? jump.moving.narrow(0, committed, count).view({1, count, 1})
                                  : PerToken(tables.moving, row, committed, count);
    Step(tables, row, target, moving, committed, count, tokens, hooks, estimate);
    ++counts.calls;
    counts.token_forwards += count * ModelCallsPerWindow();
    if (counts.cut_short) break;
    // Tokens clean when this call started had their final keys and values
    // computed: commit the window's clean prefix.
    int clean = 0;
    while (clean < count && program.level(row, committed + clean) == 0) ++clean;
    if (clean > 0) {
      cache.AppendScratch(Prefix(kv.keys, clean), Prefix(kv.values, clean));
      committed += clean;
    }
  }
  if (pending.defined()) counts.token_forwards += AppendClean(pending, cache);
  return counts;
}

DenoiseCounts DenoiseEngine::RunUncached(const SchedulingMatrix& program, const at::Tensor& tokens,
                                         const at::Tensor& context,
                                         const DenoiseHooks& hooks) const {
  CheckHooks(hooks);
  const Tables& tables = TablesFor(program, tokens.device());
  const int horizon = program.horizon();
  const int64_t num_context = context.size(1);
  const at::Tensor full_context = context.expand({tokens.size(0), num_context, context.size(2)});
  const at::Tensor context_steps = at::full({num_context}, -1, at::kLong);
  // Context tokens get no side input, as in Run's context (AppendClean).
  at::Tensor known = hooks.known_actions;
  if (known.defined()) {
    known = at::cat(
        {at::zeros({known.size(0), num_context, known.size(2)}, known.options()), known}, 1);
  }
  DenoiseCounts counts;
  for (int row = 0; row < program.num_calls(); ++row) {
    if (hooks.before_call) hooks.before_call(row, PerToken(tables.alpha_bars, row, 0, horizon));
    const at::Tensor steps = at::cat({context_steps, tables.timesteps[row]});
    const Estimate estimate =
        Evaluate(tables, row, 0, horizon, tokens, hooks, [&](const at::Tensor& input) {
          const at::Tensor window = at::cat({full_context, input}, 1);
          return Guided(
                     [&](const at::Tensor& outcome, WindowKeysValues*) {
                       return model_.Forward(window, steps, nullptr, nullptr, known, outcome);
                     },
                     nullptr)
              .narrow(1, num_context, horizon);
        });
    Step(tables, row, row + 1, PerToken(tables.moving, row, 0, horizon), 0, horizon, tokens, hooks,
         estimate);
    ++counts.calls;
    counts.token_forwards += (num_context + horizon) * ModelCallsPerWindow();
  }
  return counts;
}

int64_t DenoiseEngine::AppendClean(const at::Tensor& tokens, KvCache& cache) const {
  at::NoGradGuard no_grad;  // the cache holds constants
  WindowKeysValues kv;
  const int64_t n = tokens.size(1);
  CachedForward(tokens, at::full({n}, -1, at::kLong), cache, &kv);
  cache.Append(kv.keys, kv.values);
  return n;
}

}  // namespace dfmpc::worldmodel
