#include "dfmpc/planner/planner.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "call_clock.h"
#include "dfmpc/planner/model_task.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/between_blocks.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/cpu_bf16.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/forward_graphs.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/transformer.h"
#include "intra_op_threads.h"
#include "plan_denoiser.h"
#include "plan_schedule.h"
#include "plan_scorer.h"
#include "planned_action.h"
#include "real_token.h"
#include "step_budget.h"
#include "step_programs.h"
#include "step_queue.h"
#include "step_transaction.h"

namespace dfmpc::planner {

using worldmodel::Checkpoint;
using worldmodel::KvCache;
using worldmodel::SchedulingMatrix;

namespace {

using Clock = std::chrono::steady_clock;

// The model's device, checked against the one the options name.
at::Device ModelDevice(const Checkpoint& checkpoint, const PlannerOptions& options) {
  const at::Device device = checkpoint.model->CacheOptions().device;
  if (!options.device.empty()) {
    const at::Device named = worldmodel::ParseDevice(options.device);
    if (named.type() != device.type() ||
        (named.has_index() && device.has_index() && named.index() != device.index())) {
      throw std::invalid_argument("planner: the options name device " + options.device +
                                  " but the model is on " + device.str() +
                                  " (Planner::FromFile loads it onto the named device)");
    }
  }
  return device;
}

// `model_path` loaded onto the device the overrides name (the CPU if none),
// checked to be a model of task `task` unless that is empty.
Checkpoint LoadOnto(const std::string& model_path, const std::string& task,
                    const PlannerOverrides& overrides) {
  PlannerOptions named;
  overrides.ApplyTo(named);
  const c10::Device device = worldmodel::ParseDevice(named.device.empty() ? "cpu" : named.device);
  return worldmodel::LoadCheckpoint(model_path, {task, 0}, device);
}

// The plan step a critic values (PlannerOptions::value_step; 0: H / 2).
int ValueStep(const PlannerOptions& options) {
  return options.value_step > 0 ? options.value_step : std::max(1, options.horizon / 2);
}

// A warm step leaves the plan's far tokens at level K, pure noise with no
// clean estimate to score: a critic reading one would value nothing.
void RequireValueStepEstimated(const PlannerOptions& options,
                               const worldmodel::SchedulingMatrix& warm_program) {
  int estimated = 0;
  for (int t = 0; t < options.horizon; ++t) {
    if (warm_program.level(warm_program.rows() - 1, t) < options.levels) estimated = t + 1;
  }
  const int step = ValueStep(options);
  if (step > estimated) {
    throw std::invalid_argument(
        "planner: value step " + std::to_string(step) + " reads plan token " +
        std::to_string(step) +
        ", which a warm step leaves as pure noise (level K = " + std::to_string(options.levels) +
        ") with nothing to value; the warm plan has estimates of " + "its first " +
        std::to_string(estimated) + " tokens, so use a value step of at most " +
        std::to_string(estimated) + " (0: the middle of the plan)");
  }
}

// The resolved options: u and the context length filled in, and checked
// against the model.
PlannerOptions Resolve(PlannerOptions options, const Checkpoint& checkpoint) {
  options.Validate();
  if (options.outcome_guidance > 0.0 && !checkpoint.model->config().outcome_input) {
    throw std::invalid_argument(
        "planner: outcome_guidance needs a model trained with the outcome condition (dfmpc "
        "train --outcome-condition); this one was trained without it");
  }
  if (options.uncertainty == 0.0) {
    options.uncertainty = static_cast<double>(options.levels) / options.horizon;
  }
  const int window = checkpoint.info.train_window > 0 ? checkpoint.info.train_window
                                                      : checkpoint.model->config().max_positions;
  if (options.context_length == 0) options.context_length = window - options.horizon;
  if (options.context_length < 2 || options.context_length + options.horizon > window) {
    throw std::invalid_argument(
        "planner: context length " + std::to_string(options.context_length) + " plus horizon " +
        std::to_string(options.horizon) + " must fit the " + std::to_string(window) +
        " tokens the model was trained on, with at least two context tokens");
  }
  if (options.sinks >= options.context_length - 1) {
    throw std::invalid_argument("planner: sinks (" + std::to_string(options.sinks) +
                                ") must be fewer than the context length minus one (" +
                                std::to_string(options.context_length - 1) + ")");
  }
  const int distilled = checkpoint.info.sampling_levels;
  if (distilled > 0 && options.levels != distilled) {
    throw std::invalid_argument(
        "planner: the model was distilled to sample with K = " + std::to_string(distilled) +
        " levels, the options ask for K = " + std::to_string(options.levels) +
        " (planner::AtLevels moves tuned options to its K)");
  }
  if (options.levels > checkpoint.info.num_timesteps) {
    throw std::invalid_argument(
        "planner: " + std::to_string(options.levels) + " levels exceed the model's " +
        std::to_string(checkpoint.info.num_timesteps) + " training timesteps");
  }
  // Checks that the schedule exists (a fresh warm token must enter at level K).
  if (options.mode == PlanMode::kWarm) {
    if (options.horizon < 2) {
      throw std::invalid_argument(
          "planner: warm mode keeps a plan past the executed token: H >= 2");
    }
    const worldmodel::SchedulingMatrix program =
        WarmProgram(options.levels, options.horizon, options.uncertainty, options.calls_per_step,
                    options.renoise_levels);
    if (!options.value_model.empty()) RequireValueStepEstimated(options, program);
  }
  return options;
}

// The thread state a step's model work runs under: its intra-op threads,
// bfloat16 products, and inference mode without autograd.
struct StepScope {
  StepScope(const PlannerOptions& options, bool inference)
      : threads(options.threads), bf16(options.cpu_bf16), inference_mode(inference) {}
  IntraOpThreads threads;
  worldmodel::CpuBf16Products bf16;
  c10::InferenceMode inference_mode;
  at::NoGradGuard no_grad;
};

}  // namespace

class Planner::Impl {
 public:
  Impl(const Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost, const PlannerOptions& options)
      : checkpoint_(checkpoint),
        cost_(std::move(cost)),
        options_(Resolve(options, checkpoint)),
        schedule_(checkpoint.info.num_timesteps, checkpoint.info.beta),
        graphs_(MakeGraphs()),
        denoiser_(*checkpoint_.model, schedule_,
                  DenoiseOptions{options_.levels, checkpoint.info.prediction, options_.eta,
                                 options_.guidance_scale, options_.outcome_guidance,
                                 options_.target_outcome},
                  Spread(options_), graphs_.get()),
        cache_(CacheOptions()),
        real_tokens_(checkpoint.info.layout, checkpoint.normalizer, checkpoint.info.task),
        generator_(at::detail::createCPUGenerator(options_.seed)),
        queue_(options_.context_length, checkpoint.info.layout.observation_dim,
               checkpoint.info.layout.action_dim),
        clock_(options_.horizon + 1),
        programs_(options_),
        depth_(checkpoint.model->config().depth) {
    const worldmodel::TokenLayout& layout = checkpoint.info.layout;
    if (!cost_) throw std::invalid_argument("planner: no task cost given");
    if (cost_->task() != checkpoint.info.task) {
      throw std::invalid_argument("planner: the model was trained for task '" +
                                  checkpoint.info.task + "' but the cost is for '" + cost_->task() +
                                  "'");
    }
    if (cost_->observation_dim() != layout.observation_dim ||
        cost_->action_dim() != layout.action_dim) {
      throw std::invalid_argument(
          "planner: the cost's observation/action sizes do not match "
          "the model's token layout");
    }
    const at::Device device = ModelDevice(checkpoint, options_);
    if (!options_.value_model.empty()) {
      cost_ = WithValue(std::move(cost_), options_.value_model, options_.value_weight,
                        ValueStep(options_), device.str(), checkpoint.info.action_repeat);
    }
    scorer_.emplace(layout, checkpoint.normalizer.To(device), *cost_, options_.selection,
                    options_.temperature,
                    options_.rollout_model.empty()
                        ? nullptr
                        : LoadRolloutModel(options_.rollout_model, checkpoint.info.task, layout,
                                           checkpoint.info.action_repeat, device),
                    options_.rollout_disagreement);
  }

  void Reset(const Eigen::VectorXd& observation) {
    real_tokens_.Check(observation);
    reset_ = false;  // until the initial plan exists
    cache_.Clear();
    generator_ = at::detail::createCPUGenerator(options_.seed);
    has_plan_ = false;
    programs_.Forget();
    plan_out_ = Plan{};
    stats_ = StepStats{};
    plan_step_ = -1;
    queue_.Reset(observation);
    Optimize(Clock::time_point::max());
    reset_ = true;
  }

  Eigen::VectorXd Act(const Eigen::VectorXd& observation) {
    RequireReset();
    real_tokens_.Check(observation);
    if (queue_.ConfirmStepZero(observation)) return Action();
    const StepQueue::Mark mark = queue_.Save();
    // Nothing was applied between Reset and a first Act with a new
    // observation: that step was reached by the zero action.
    queue_.Observe(observation,
                   queue_.awaiting_first_step() ? Eigen::VectorXd::Zero(action_dim()) : Action());
    try {
      Optimize(Clock::time_point::max());
    } catch (...) {
      queue_.Restore(mark);
      throw;
    }
    return Action();
  }

  void RequireReset() const {
    if (!reset_) throw std::invalid_argument("planner: called before Reset");
  }

  void CheckObservation(const Eigen::VectorXd& observation) const {
    real_tokens_.Check(observation);
  }

  void Observe(const Eigen::VectorXd& observation, const Eigen::VectorXd& executed_action) {
    RequireReset();
    real_tokens_.Check(observation);
    if (executed_action.size() != action_dim() || !executed_action.allFinite()) {
      throw std::invalid_argument("planner: the executed action must hold " +
                                  std::to_string(action_dim()) + " finite values, got " +
                                  std::to_string(executed_action.size()));
    }
    queue_.Observe(observation, executed_action);
  }

  void SetAbortCallback(std::function<bool()> abort) { abort_ = std::move(abort); }

  bool Optimize(Clock::time_point deadline, DeadlineKind kind = DeadlineKind::kHard) {
    if (queue_.empty()) return false;
    const auto start = Clock::now();
    clock_.Abandon();  // a call of a step that threw
    const StepScope scope(options_, InferenceAllowed());
    const StepBudget budget(deadline, kind, abort_);
    const std::function<void()> check = [this, &budget] {
      const Clock::time_point now = Clock::now();
      if (call_.blocks_done == 0) call_.blocks_start = now;
      budget.CheckBeforeBlock(now, call_.blocks_start, call_.blocks_done++, call_.blocks,
                              call_.after);
    };
    const worldmodel::BetweenBlocks between_blocks(&check);
    const int queued = queue_.size();
    const bool restart = queue_.restart_history();
    const StepPrograms::Choice choice = ChooseProgram(queued, restart, budget);
    const double least_plan_seconds = LeastPlanSeconds(*choice.program);
    // On an exception the transaction restores the cache and the generator
    // and the queue is untouched; the plan is built in new tensors and
    // members are assigned only after the commit.
    StepTransaction step(cache_, generator_, queued, restart, step_mark_);
    if (restart) cache_.Clear();
    const CatchUpResult caught_up = CatchUp(queued, least_plan_seconds, budget);
    const int appended = caught_up.appended;
    if (caught_up.stopped || appended + 1 < queued || !budget.Fits(least_plan_seconds)) {
      step.Commit();
      Defer(appended,
            (queued - 1 - appended) * clock_.Predict(CallKind::kContext, 1) + least_plan_seconds,
            caught_up.stopped, start);
      return false;
    }
    std::optional<PlannedStep> planned = PlanPhase(choice, budget, queued);
    step.Commit();
    if (!planned) {  // a model call stopped at the deadline
      Defer(appended, least_plan_seconds, /*stopped=*/true, start);
      return false;
    }
    Adopt(std::move(*planned), choice);
    queue_.Take(queued);
    stats_.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return true;
  }

  Eigen::VectorXd Action() const {
    if (plan_step_ < 0) return Eigen::VectorXd::Zero(action_dim());  // Reset's first plan
    return PlannedAction(action_now_, plan_out_.actions, queue_.newest_step() - plan_step_,
                         options_.action_window, options_.action_gain, options_.action_gain_knee);
  }

  const Plan& plan() const { return plan_out_; }
  const StepStats& last_step() const { return stats_; }
  const PlannerOptions& options() const { return options_; }
  const std::string& task() const { return checkpoint_.info.task; }
  int observation_dim() const { return checkpoint_.info.layout.observation_dim; }
  int action_dim() const { return checkpoint_.info.layout.action_dim; }
  int action_repeat() const { return checkpoint_.info.action_repeat; }
  int64_t steps() const { return queue_.newest_step() + (queue_.awaiting_first_step() ? 0 : 1); }
  const KvCache& context_cache() const { return cache_; }

 private:
  // The normalized real token of the i-th queued step.
  at::Tensor BuildReal(int i) const {
    return real_tokens_.Build(queue_.action(i), queue_.observation(i), queue_.previous(i),
                              device());
  }

  // A model call begins; `after`: the seconds of work that must follow it
  // before the step can return.
  void BeginCall(CallKind kind, int tokens, double after) {
    clock_.Begin(kind, tokens);
    call_.blocks_done = 0;
    // A plan window under outcome guidance runs the model twice.
    call_.blocks = depth_ * (kind == CallKind::kPlan ? denoiser_.ModelCallsPerWindow() : 1);
    call_.after = after;
  }

  // A call stopped before one of its blocks ran only the blocks before it:
  // its duration is estimated from them (CallClock::EndPartly). The time to
  // the stop alone would predict too short a call, and no sample at all
  // would let the prediction decay, so that the next call would start and
  // stop again.
  void EndStoppedCall() {
    clock_.EndPartly(static_cast<double>(call_.blocks_done - 1) /
                     call_.blocks);  // the last check threw
  }

  // The program of a step with `queued` steps to append: with the block
  // cache, the whole plan's program only where its calls, after the
  // catch-up forwards, would end by the deadline.
  StepPrograms::Choice ChooseProgram(int queued, bool restart, const StepBudget& budget) {
    const int64_t moved = queue_.newest_step() - plan_step_;  // control steps the plan moves by
    const bool kept = has_plan_ && !restart && moved < options_.horizon;
    return programs_.For(kept, static_cast<int>(moved), plan_out_.levels,
                         [&](const SchedulingMatrix& program) {
                           return budget.Fits((queued - 1) * clock_.Predict(CallKind::kContext, 1) +
                                              LeastPlanSeconds(program));
                         });
  }

  struct CatchUpResult {
    int appended = 0;
    bool stopped = false;  // a forward stopped at the deadline
  };

  // Every queued real token but the newest gets a forward of its own, so
  // each attends to the same window of history as in a step of its own
  // (the ring evicts between them); the newest rides in the plan's first
  // call. With a deadline, only as many as leave time for that call.
  CatchUpResult CatchUp(int queued, double least_plan_seconds, const StepBudget& budget) {
    CatchUpResult result;
    for (; result.appended + 1 < queued; ++result.appended) {
      budget.CheckAbort();
      if (!budget.Fits(clock_.Predict(CallKind::kContext, 1) + least_plan_seconds)) break;
      BeginCall(CallKind::kContext, 1, /*after=*/0.0);  // a deferred step keeps the forward
      try {
        denoiser_.AppendReal(BuildReal(result.appended), cache_);
      } catch (const StepStopped&) {  // the cache is as before the forward
        EndStoppedCall();
        result.stopped = true;
        return result;
      }
      clock_.End();
    }
    budget.CheckAbort();
    return result;
  }

  struct PlannedStep {
    std::optional<Choice> choice;  // none: no candidate was finite
    StepStats stats;
  };

  // The model calls of the step's program on the candidates, then the
  // choice among them. A call stopped at the deadline leaves the cache and
  // the generator as before the first call and returns nothing.
  std::optional<PlannedStep> PlanPhase(const StepPrograms::Choice& step_program,
                                       const StepBudget& budget, int queued) {
    const SchedulingMatrix& program = *step_program.program;
    StepTransaction phase(cache_, generator_, /*tokens=*/1, /*clears=*/false, plan_mark_);
    const LastStep last{queue_.newest_observation(), queue_.action(queued - 1)};
    const at::Tensor real = BuildReal(queued - 1);
    PlanBatch plan = step_program.warm ? ShiftedPlan(program, generator_, step_program.shift)
                                       : NoisePlan(generator_);
    const int64_t replays_before = graphs_ ? graphs_->stats().replayed : 0;
    const double score_seconds = clock_.Predict(CallKind::kScore, 1);
    DenoiseCounts counts;
    try {
      counts = denoiser_.Run(
          program, plan, cache_, generator_,
          [&](const at::Tensor& prefix) { return scorer_->PrefixCost(prefix, last); }, real,
          [&](int call_tokens, int jump_tokens) {
            budget.CheckAbort();
            return budget.Fits(clock_.Predict(CallKind::kPlan, call_tokens) +
                               clock_.Predict(CallKind::kPlan, jump_tokens) +
                               clock_.Predict(CallKind::kScore, 1));
          },
          [&](int tokens) { BeginCall(CallKind::kPlan, tokens, score_seconds); });
    } catch (const StepStopped&) {  // `phase` restores the cache and the generator
      EndStoppedCall();
      return std::nullopt;
    }
    clock_.Begin(CallKind::kScore, 1);
    cache_.RollbackScratch();
    PlannedStep planned;
    StepStats& stats = planned.stats;
    stats.calls = counts.calls;
    stats.token_forwards = counts.token_forwards + queued - 1;
    stats.steps_caught_up = step_program.shift;
    stats.cut_short = counts.cut_short;
    stats.refresh_postponed = step_program.refresh_postponed;
    if (graphs_) stats.graph_replays = static_cast<int>(graphs_->stats().replayed - replays_before);
    planned.choice = scorer_->Choose(plan, last);
    clock_.End();
    phase.Commit();
    return planned;
  }

  // The step's chosen plan becomes the kept one (or, with none finite, the
  // previous plan's action serves this step and the history restarts).
  void Adopt(PlannedStep planned, const StepPrograms::Choice& step_program) {
    StepStats& stats = planned.stats;
    if (planned.choice) {
      Choice& choice = *planned.choice;
      const SchedulingMatrix& program = *step_program.program;
      plan_ = std::move(choice.plan);
      plan_out_ = std::move(choice.described);
      action_now_ = WindowedAction(choice.action, plan_out_.actions, 0, options_.action_window,
                                   options_.action_gain, options_.action_gain_knee);
      plan_out_.levels.resize(options_.horizon);
      for (int t = 0; t < options_.horizon; ++t) {
        plan_out_.levels[t] = program.level(program.rows() - 1, t);
      }
      has_plan_ = true;
      programs_.Planned(step_program);
    } else {
      action_now_ = Action();  // the previous plan's, for this step
      stats.fallback = true;
      cache_.Clear();  // the history may hold non-finite keys and values
      plan_out_ = Plan{};
      has_plan_ = false;
    }
    plan_step_ = queue_.newest_step();
    plan_out_.step = plan_step_;
    stats_ = stats;
  }

  // A step the deadline left no time to plan, or whose model call stopped
  // at it: the `appended` real tokens that fit stay in the history, the
  // plan and its action are kept (the plan is read `age` steps on:
  // Action()).
  void Defer(int appended, double needed_seconds, bool stopped, Clock::time_point start) {
    if (queue_.restart_history()) has_plan_ = false;  // its history is gone
    queue_.Take(appended);
    StepStats stats;
    stats.token_forwards = appended;
    stats.steps_caught_up = 0;
    stats.deferred = true;
    stats.stopped = stopped;
    stats.needed_ms = needed_seconds * 1e3;
    stats.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    stats_ = stats;
  }

  // What a step running `program` needs after its real tokens: its first
  // call (as a jump from row 0 if need be, with the newest real token
  // leading it), the least a step can run, and the scoring.
  double LeastPlanSeconds(const SchedulingMatrix& program) const {
    const int first_call_tokens =
        LastMovingToken(program, 0, program.rows() - 1) + 1 + /*newest real token*/ 1;
    return clock_.Predict(CallKind::kPlan, first_call_tokens) + clock_.Predict(CallKind::kScore, 1);
  }

  // The last token whose level differs between two rows of `program`.
  static int LastMovingToken(const SchedulingMatrix& program, int row, int target) {
    for (int t = program.horizon() - 1; t >= 0; --t) {
      if (program.level(row, t) != program.level(target, t)) return t;
    }
    return -1;
  }

  worldmodel::KvCacheOptions CacheOptions() const {
    worldmodel::KvCacheOptions cache = checkpoint_.model->CacheOptions();
    // The newest real token rides in each step's first call (PlanDenoiser).
    cache.capacity = options_.context_length - 1;
    cache.num_sinks = options_.sinks;
    cache.evict = true;
    cache.scratch_capacity = options_.horizon;
    cache.persistent_batch = 1;
    cache.scratch_batch = options_.candidates;
    return cache;
  }

  at::Device device() const { return cache_.options().device; }
  int token_dim() const { return checkpoint_.info.layout.token_dim(); }

  // Without guidance nothing needs autograd, and inference mode also skips
  // the version counting and view tracking that dominate a small op's cost.
  // Plan and cache tensors are then inference tensors, so a planner never
  // mixes the two modes: guidance is fixed by its options.
  bool InferenceAllowed() const { return options_.guidance_scale == 0.0; }

  at::Tensor Noise(int64_t tokens, at::Generator& generator) const {
    return PlanNoise(generator, {options_.candidates, tokens, token_dim()}, device(),
                     Spread(options_));
  }

  static NoiseSpread Spread(const PlannerOptions& options) {
    return {options.noise_scale, std::lround(options.noise_scale_share * options.candidates)};
  }

  // CUDA graphs for the model calls, where they can serve (see options).
  std::unique_ptr<worldmodel::ForwardGraphs> MakeGraphs() {
    if (!options_.cuda_graphs || !InferenceAllowed() ||
        !checkpoint_.model->CacheOptions().device.is_cuda()) {
      return nullptr;
    }
    return std::make_unique<worldmodel::ForwardGraphs>(*checkpoint_.model);
  }

  PlanBatch NoisePlan(at::Generator& generator) const {
    PlanBatch plan;
    plan.tokens = Noise(options_.horizon, generator);
    plan.clean_estimate = at::zeros_like(plan.tokens);
    return plan;
  }

  // The kept plan with its first `shift` tokens (executed) dropped, as many
  // pure-noise ones appended, and every token re-noised from its kept level
  // (its shifted resting level, unless the block cache let it wait) to the
  // program's first row. New tensors: the kept plan is
  // not modified.
  PlanBatch ShiftedPlan(const SchedulingMatrix& program, at::Generator& generator,
                        int shift) const {
    const int horizon = options_.horizon, kept = horizon - shift;
    PlanBatch plan;
    plan.tokens = at::cat({plan_.tokens.narrow(1, shift, kept), Noise(shift, generator)}, 1);
    plan.clean_estimate = at::cat({plan_.clean_estimate.narrow(1, shift, kept),
                                   at::zeros_like(plan.tokens.narrow(1, 0, shift))},
                                  1);
    plan.estimated = std::max(0, plan_.estimated - shift);
    if (options_.calls_per_step == 1 && options_.renoise_levels == 0) return plan;
    // Forward diffusion from level a to level b >= a: scale by
    // sqrt(ab_b / ab_a) and add noise of variance 1 - ab_b / ab_a.
    std::vector<double> keep(horizon, 1.0);  // the fresh tokens are pure noise already
    for (int t = 0; t < kept; ++t) {
      const double from = LevelAlphaBar(plan_out_.levels[t + shift]);
      keep[t] = LevelAlphaBar(program.level(0, t)) / from;
    }
    const at::Tensor ratio = worldmodel::ToDevice(
        at::tensor(keep, at::kDouble).view({1, horizon, 1}), device(), at::kFloat);
    plan.tokens = ratio.sqrt() * plan.tokens + (1 - ratio).sqrt() * Noise(horizon, generator);
    return plan;
  }

  double LevelAlphaBar(int level) const {
    return schedule_.AlphaBar(schedule_.LevelTimestep(level, options_.levels));
  }

  Checkpoint checkpoint_;
  std::unique_ptr<TaskCost> cost_;
  PlannerOptions options_;
  worldmodel::NoiseSchedule schedule_;
  std::unique_ptr<worldmodel::ForwardGraphs> graphs_;  // null: eager calls
  PlanDenoiser denoiser_;
  KvCache cache_;
  RealTokenBuilder real_tokens_;
  at::Generator generator_;
  std::optional<PlanScorer> scorer_;  // set once the cost is checked
  StepQueue queue_;
  CallClock clock_;
  StepPrograms programs_;
  std::function<bool()> abort_;
  // The transactions' marks (the step's, its plan phase's), kept for their
  // buffers.
  worldmodel::KvCacheMark step_mark_, plan_mark_;

  PlanBatch plan_;
  bool has_plan_ = false;
  bool reset_ = false;
  const int depth_;  // transformer blocks per model call
  struct RunningCall {
    Clock::time_point blocks_start;  // its first block's
    int blocks_done = 0;             // BetweenBlocks checks so far: one per block begun
    int blocks = 1;                  // blocks the call runs in all (BeginCall sets it)
    double after = 0.0;              // seconds of work due after it
  } call_;
  int64_t plan_step_ = -1;  // the control step the plan (and action_now_) was made at
  Eigen::VectorXd action_now_;
  Plan plan_out_;  // its levels are the kept plan's after the last step
  StepStats stats_;
};

Planner::Planner(const Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost,
                 const PlannerOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint, std::move(cost), options)) {}

Planner::~Planner() = default;

std::unique_ptr<Planner> Planner::FromFile(const std::string& model_path,
                                           const PlannerOverrides& overrides,
                                           const std::string& task) {
  if (!task.empty()) return FromFile(model_path, overrides, task::LoadTaskSpec(task));
  const Checkpoint checkpoint = LoadOnto(model_path, "", overrides);
  const task::TaskSpec spec = ModelTask(checkpoint.info, model_path);
  return std::make_unique<Planner>(
      checkpoint, MakeTaskCost(spec, checkpoint.info.action_repeat),
      ResolvePlannerOptions(spec, checkpoint.info.sampling_levels, overrides).options);
}

std::unique_ptr<Planner> Planner::FromFile(const std::string& model_path,
                                           const PlannerOverrides& overrides,
                                           const task::TaskSpec& task) {
  const Checkpoint checkpoint = LoadOnto(model_path, task.name, overrides);
  return std::make_unique<Planner>(
      checkpoint, MakeTaskCost(task, checkpoint.info.action_repeat),
      ResolvePlannerOptions(task, checkpoint.info.sampling_levels, overrides).options);
}

void Planner::Reset(const Eigen::VectorXd& observation) { impl_->Reset(observation); }
Eigen::VectorXd Planner::Act(const Eigen::VectorXd& observation) { return impl_->Act(observation); }
void Planner::CheckObservation(const Eigen::VectorXd& observation) const {
  impl_->CheckObservation(observation);
}
void Planner::Observe(const Eigen::VectorXd& observation) {
  impl_->RequireReset();
  impl_->Observe(observation, impl_->Action());
}
void Planner::Observe(const Eigen::VectorXd& observation, const Eigen::VectorXd& executed_action) {
  impl_->Observe(observation, executed_action);
}
bool Planner::Optimize(std::chrono::steady_clock::time_point deadline, DeadlineKind kind) {
  impl_->RequireReset();
  return impl_->Optimize(deadline, kind);
}
void Planner::SetAbortCallback(std::function<bool()> abort) {
  impl_->SetAbortCallback(std::move(abort));
}
Eigen::VectorXd Planner::Action() const {
  impl_->RequireReset();
  return impl_->Action();
}
const Plan& Planner::plan() const { return impl_->plan(); }
const StepStats& Planner::last_step() const { return impl_->last_step(); }
const PlannerOptions& Planner::options() const { return impl_->options(); }
const std::string& Planner::task() const { return impl_->task(); }
int Planner::observation_dim() const { return impl_->observation_dim(); }
int Planner::action_dim() const { return impl_->action_dim(); }
int Planner::action_repeat() const { return impl_->action_repeat(); }
int64_t Planner::steps() const { return impl_->steps(); }
const KvCache& Planner::context_cache() const { return impl_->context_cache(); }

}  // namespace dfmpc::planner
