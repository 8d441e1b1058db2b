#include "dfmpc/planner/planner.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/forward_graphs.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/transformer.h"
#include "intra_op_threads.h"
#include "plan_denoiser.h"
#include "plan_schedule.h"
#include "planned_action.h"
#include "real_token.h"

namespace dfmpc::planner {

using worldmodel::Checkpoint;
using worldmodel::KvCache;
using worldmodel::SchedulingMatrix;

namespace {

// Rows x cols float tensor (on any device) as an Eigen matrix.
Eigen::MatrixXd ToEigen(const at::Tensor& matrix) {
  const at::Tensor cpu = matrix.to(at::kCPU, at::kDouble).contiguous();
  Eigen::MatrixXd out(cpu.size(0), cpu.size(1));
  const double* data = cpu.data_ptr<double>();
  for (int64_t r = 0; r < cpu.size(0); ++r) {
    for (int64_t c = 0; c < cpu.size(1); ++c) out(r, c) = data[r * cpu.size(1) + c];
  }
  return out;
}

at::Tensor ToTensor(const Eigen::VectorXd& v, const at::Device& device) {
  return worldmodel::ToDevice(
      at::tensor(std::vector<double>(v.data(), v.data() + v.size()), at::kDouble), device,
      at::kFloat);
}

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

// The resolved options: u and the context length filled in, and checked
// against the model.
PlannerOptions Resolve(PlannerOptions options, const Checkpoint& checkpoint) {
  options.Validate();
  if (options.uncertainty == 0.0) {
    options.uncertainty = static_cast<double>(options.num_levels) / options.horizon;
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
  if (options.num_sinks >= options.context_length - 1) {
    throw std::invalid_argument("planner: sinks (" + std::to_string(options.num_sinks) +
                                ") must be fewer than the context length minus one (" +
                                std::to_string(options.context_length - 1) + ")");
  }
  if (options.num_levels > checkpoint.info.num_timesteps) {
    throw std::invalid_argument(
        "planner: " + std::to_string(options.num_levels) + " levels exceed the model's " +
        std::to_string(checkpoint.info.num_timesteps) + " training timesteps");
  }
  // Checks that the schedule exists (a fresh warm token must enter at level K).
  if (options.mode == PlanMode::kWarm) {
    if (options.horizon < 2) {
      throw std::invalid_argument("planner: warm mode keeps a plan past the executed token: H >= 2");
    }
    WarmProgram(options.num_levels, options.horizon, options.uncertainty, options.calls_per_step,
                options.renoise_levels);
  }
  return options;
}

// Undoes a step's changes to the context cache and the random generator
// unless committed, so that an exception anywhere in a step leaves both as
// they were. (The generator is saved as its state: Generator::clone leaks
// its copy in LibTorch 1.13.)
class StepTransaction {
 public:
  // `tokens`: the real tokens the step may append.
  StepTransaction(KvCache& cache, at::Generator& generator, int tokens)
      : cache_(cache),
        mark_(cache.Mark(tokens)),
        generator_(generator),
        generator_state_(generator.get_state()) {}
  ~StepTransaction() {
    if (committed_) return;
    try {
      generator_.set_state(generator_state_);
      cache_.Restore(mark_);
    } catch (...) {  // copying back into preallocated storage failed: drop the history
      cache_.Clear();
    }
  }
  StepTransaction(const StepTransaction&) = delete;
  StepTransaction& operator=(const StepTransaction&) = delete;

  void Commit() { committed_ = true; }

 private:
  KvCache& cache_;
  worldmodel::KvCacheMark mark_;
  at::Generator& generator_;
  at::Tensor generator_state_;
  bool committed_ = false;
};

}  // namespace

class Planner::Impl {
 public:
  Impl(const Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost, const PlannerOptions& options)
      : checkpoint_(checkpoint),
        cost_(std::move(cost)),
        options_(Resolve(options, checkpoint)),
        normalizer_(checkpoint.normalizer.To(ModelDevice(checkpoint, options_))),
        schedule_(checkpoint.info.num_timesteps, checkpoint.info.beta),
        graphs_(MakeGraphs()),
        denoiser_(*checkpoint_.model, schedule_,
                  DenoiseOptions{options_.num_levels, checkpoint.info.prediction, options_.eta,
                                 options_.guidance_scale},
                  graphs_.get()),
        cache_(CacheOptions()),
        real_tokens_(checkpoint.info.layout, checkpoint.normalizer, checkpoint.info.task),
        generator_(at::detail::createCPUGenerator(options_.seed)) {
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
  }

  void Reset(const Eigen::VectorXd& observation) {
    real_tokens_.Check(observation);
    reset_ = false;  // until the initial plan exists
    cache_.Clear();
    generator_ = at::detail::createCPUGenerator(options_.seed);
    has_plan_ = false;
    plan_out_ = Plan{};
    stats_ = StepStats{};
    plan_step_ = -1;
    last_observation_ = observation;
    // The first token carries a zero action and a zero change, as in training.
    queue_ = Queue{};
    queue_.pending.push_back({Eigen::VectorXd::Zero(action_dim()), observation});
    queue_.previous = observation;
    Optimize(std::chrono::steady_clock::time_point::max());
    reset_ = true;
    queue_.awaiting_first_act = true;
  }

  Eigen::VectorXd Act(const Eigen::VectorXd& observation) {
    RequireReset();
    real_tokens_.Check(observation);
    if (queue_.awaiting_first_act) {
      if (observation != last_observation_) {
        throw std::invalid_argument(
            "planner: the first Act after Reset must receive the observation "
            "given to Reset "
            "(later ones receive the observation the last action led to)");
      }
      queue_.awaiting_first_act = false;
      return Action();
    }
    const Queue saved = queue_;
    Observe(observation, Action());
    try {
      Optimize(std::chrono::steady_clock::time_point::max());
    } catch (...) {
      queue_ = saved;
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
    Queue& q = queue_;
    q.awaiting_first_act = false;
    if (q.pending.empty()) q.previous = last_observation_;
    if (!q.pending.empty() && static_cast<int>(q.pending.size()) + 1 >= options_.horizon) {
      // So far behind that the plan has no token left for this step: drop
      // the history and restart it from this observation (its change
      // feature still follows the real previous one), as after a fallback.
      q.previous = q.pending.back().observation;
      q.pending.clear();
      q.restart_history = true;
    }
    q.pending.push_back({executed_action, observation});
    ++q.observed_step;
  }

  bool Optimize(std::chrono::steady_clock::time_point deadline) {
    const std::vector<RealStep>& pending = queue_.pending;
    if (pending.empty()) return false;
    const auto start = std::chrono::steady_clock::now();
    IntraOpThreads threads(options_.threads);
    c10::InferenceMode inference(InferenceAllowed());
    at::NoGradGuard no_grad;
    const int queued = static_cast<int>(pending.size());
    const Eigen::VectorXd missed_action = Action();
    // The history is dropped anyway: a failed step leaves it empty.
    if (queue_.restart_history) cache_.Clear();
    // The step builds its plan in new tensors and assigns members only at
    // the end; on an exception the transaction restores the cache and the
    // generator, so the planner is as it was.
    StepTransaction transaction(cache_, generator_, queued);
    // Every queued real token but the newest gets a forward of its own, so
    // each attends to the same window of history as in a step of its own
    // (the ring evicts between them); the newest rides in the first call.
    const Eigen::VectorXd* previous = &queue_.previous;
    for (int i = 0; i + 1 < queued; ++i) {
      denoiser_.AppendReal(BuildReal(pending[i], *previous), cache_);
      previous = &pending[i].observation;
    }
    const at::Tensor real = BuildReal(pending.back(), *previous);
    const Eigen::VectorXd observation = pending.back().observation;

    const bool warm =
        options_.mode == PlanMode::kWarm && has_plan_ && !queue_.restart_history;
    const SchedulingMatrix program =
        warm ? WarmProgram(options_.num_levels, options_.horizon, options_.uncertainty,
                           options_.calls_per_step, options_.renoise_levels, queued)
             : FromNoiseProgram(options_.num_levels, options_.horizon, options_.uncertainty,
                                /*complete=*/options_.mode == PlanMode::kReplan);
    PlanBatch plan = warm ? ShiftedPlan(program, generator_, queued) : NoisePlan(generator_);
    const int64_t replays_before = graphs_ ? graphs_->stats().replayed : 0;
    const bool timed = deadline != std::chrono::steady_clock::time_point::max();
    const DenoiseCounts counts = denoiser_.Run(
        program, plan, cache_, generator_,
        [&](const at::Tensor& prefix) { return PrefixCost(prefix, observation); }, real,
        timed ? std::function<bool()>([deadline] {
          return std::chrono::steady_clock::now() >= deadline;
        })
              : std::function<bool()>());
    cache_.RollbackScratch();
    StepStats stats;
    stats.calls = counts.calls;
    stats.token_forwards = counts.token_forwards + queued - 1;
    stats.steps_caught_up = queued;
    stats.cut_short = counts.cut_short;
    if (graphs_) stats.graph_replays = static_cast<int>(graphs_->stats().replayed - replays_before);

    std::optional<Choice> choice = Choose(plan, program, observation);
    transaction.Commit();
    if (choice) {
      action_now_ = std::move(choice->action);
      plan_ = std::move(choice->plan);
      plan_levels_ = std::move(choice->levels);
      plan_out_ = std::move(choice->described);
      has_plan_ = true;
    } else {
      action_now_ = missed_action;
      stats.fallback = true;
      cache_.Clear();  // the history may hold non-finite keys and values
      plan_out_ = Plan{};
      has_plan_ = false;
    }
    plan_out_.step = queue_.observed_step;
    plan_step_ = queue_.observed_step;
    last_observation_ = observation;
    queue_.pending.clear();
    queue_.restart_history = false;
    stats.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    stats_ = stats;
    return true;
  }

  Eigen::VectorXd Action() const {
    if (plan_step_ < 0) return Eigen::VectorXd::Zero(action_dim());  // Reset's first plan
    return PlannedAction(action_now_, plan_out_.actions, queue_.observed_step - plan_step_);
  }

  const Plan& plan() const { return plan_out_; }
  const StepStats& last_step() const { return stats_; }
  const PlannerOptions& options() const { return options_; }
  const std::string& task() const { return checkpoint_.info.task; }
  int observation_dim() const { return checkpoint_.info.layout.observation_dim; }
  int action_dim() const { return checkpoint_.info.layout.action_dim; }
  int action_repeat() const { return checkpoint_.info.action_repeat; }
  int64_t steps() const { return queue_.observed_step + (queue_.awaiting_first_act ? 0 : 1); }
  const KvCache& context_cache() const { return cache_; }

 private:
  // A control step observed but not yet planned for.
  struct RealStep {
    Eigen::VectorXd action;  // a_{s-1}, executed before it
    Eigen::VectorXd observation;  // o_s
  };
  // What Observe changes, kept apart so that a failed Act puts it back.
  struct Queue {
    std::vector<RealStep> pending;  // at most H - 1 steps
    Eigen::VectorXd previous;       // the observation before pending[0]
    int64_t observed_step = 0;      // the newest observed control step
    bool restart_history = false;   // drop the history before the next step
    bool awaiting_first_act = false;
  };

  // The normalized real token of `step`, whose previous observation is
  // `previous`.
  at::Tensor BuildReal(const RealStep& step, const Eigen::VectorXd& previous) const {
    return real_tokens_.Build(step.action, step.observation, previous, device());
  }

  // The candidate a step keeps, with what the planner stores of it.
  struct Choice {
    Eigen::VectorXd action;
    PlanBatch plan;           // the chosen plan in every candidate slot
    std::vector<int> levels;  // its levels after the step
    Plan described;
  };

  worldmodel::KvCacheOptions CacheOptions() const {
    worldmodel::KvCacheOptions cache = checkpoint_.model->CacheOptions();
    // The newest real token rides in each step's first call (PlanDenoiser).
    cache.capacity = options_.context_length - 1;
    cache.num_sinks = options_.num_sinks;
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
    return worldmodel::ToDevice(at::randn({options_.candidates, tokens, token_dim()}, generator,
                                          at::TensorOptions().dtype(at::kFloat)),
                                device(), at::kFloat);
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
  // pure-noise ones appended, and every token re-noised from its shifted
  // resting level to the program's first row. New tensors: the kept plan is
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
      const double from = LevelAlphaBar(plan_levels_[t + shift]);
      keep[t] = LevelAlphaBar(program.level(0, t)) / from;
    }
    const at::Tensor ratio =
        worldmodel::ToDevice(at::tensor(keep, at::kDouble).view({1, horizon, 1}), device(),
                             at::kFloat);
    plan.tokens = ratio.sqrt() * plan.tokens + (1 - ratio).sqrt() * Noise(horizon, generator);
    return plan;
  }

  double LevelAlphaBar(int level) const {
    return schedule_.AlphaBar(schedule_.LevelTimestep(level, options_.num_levels));
  }

  // Summed task cost [N] of normalized clean plan prefixes [N, n, d] that
  // follow `observation`.
  at::Tensor PrefixCost(const at::Tensor& prefix, const Eigen::VectorXd& observation) const {
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    const at::Tensor tokens = normalizer_.Denormalize(prefix);
    const at::Tensor previous =
        ToTensor(observation, device()).expand({prefix.size(0), layout.observation_dim});
    const at::Tensor observations = worldmodel::TokenObservations(layout, tokens, previous);
    const at::Tensor actions = tokens.narrow(-1, 0, layout.action_dim);
    return cost_->StepCosts(observations, actions).sum(1);
  }

  // Scores the candidates and picks the plan to keep and the action to
  // execute. A candidate whose cost, action or tokens are not finite is
  // never picked; nullopt when none is left.
  std::optional<Choice> Choose(const PlanBatch& plan, const SchedulingMatrix& program,
                               const Eigen::VectorXd& observation) const {
    const int estimated = std::max(1, plan.estimated);
    const at::Tensor costs = PrefixCost(plan.clean_estimate.narrow(1, 0, estimated), observation);
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    const at::Tensor first_actions = normalizer_.Denormalize(plan.tokens.select(1, 0))
                                         .narrow(-1, 0, layout.action_dim);  // [N, act]
    const at::Tensor valid = at::isfinite(costs) & at::isfinite(first_actions).all(1) &
                             at::isfinite(plan.tokens).flatten(1).all(1);
    const at::Tensor finite_costs =
        at::where(valid, costs, at::full_like(costs, std::numeric_limits<float>::infinity()));
    // The choice stays on the device until one read-back of what the host
    // needs: [any valid, best, its cost, the action]. (On a GPU every read
    // back waits for the queued kernels; a step used to make seven.)
    const at::Tensor best = finite_costs.argmin().view({1});
    at::Tensor action = first_actions.index_select(0, best)[0];
    if (options_.selection == Selection::kMppi) {
      // Invalid candidates get weight exp(-inf) = 0 and a zero action.
      const at::Tensor weights =
          at::softmax(-(finite_costs - finite_costs.index_select(0, best)) / options_.temperature,
                      0);
      const at::Tensor actions =
          at::where(valid.unsqueeze(1), first_actions, at::zeros_like(first_actions));
      action = (weights.unsqueeze(1) * actions).sum(0);
    }
    const at::Tensor read_back = at::cat({valid.any().to(at::kFloat).view({1}),
                                          best.to(at::kFloat), finite_costs.index_select(0, best),
                                          action.clamp(-1.0, 1.0).to(at::kFloat)})
                                     .to(at::kCPU, at::kDouble);
    const double* host = read_back.data_ptr<double>();
    if (host[0] == 0.0) return std::nullopt;
    const int64_t chosen = static_cast<int64_t>(host[1]);
    Choice choice;
    choice.action = Eigen::Map<const Eigen::VectorXd>(host + 3, layout.action_dim);
    if (!choice.action.allFinite()) return std::nullopt;
    choice.plan.tokens = plan.tokens.narrow(0, chosen, 1).expand_as(plan.tokens).clone();
    choice.plan.clean_estimate =
        plan.clean_estimate.narrow(0, chosen, 1).expand_as(plan.clean_estimate).clone();
    choice.plan.estimated = plan.estimated;
    choice.levels.resize(options_.horizon);
    for (int t = 0; t < options_.horizon; ++t) {
      choice.levels[t] = program.level(program.rows() - 1, t);
    }
    choice.described = Describe(choice.plan, choice.levels, host[2], observation);
    return choice;
  }

  // The kept plan (candidate 0) in the environment's units.
  Plan Describe(const PlanBatch& plan, const std::vector<int>& levels, double cost,
                const Eigen::VectorXd& observation) const {
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    const at::Tensor estimate = normalizer_.Denormalize(plan.clean_estimate[0]);
    const at::Tensor observations =
        worldmodel::TokenObservations(layout, estimate, ToTensor(observation, device()));
    // One read-back: [actions, observations, normalized tokens] per row.
    const Eigen::MatrixXd rows = ToEigen(
        at::cat({estimate.narrow(-1, 0, layout.action_dim), observations, plan.tokens[0]}, -1));
    const int actions = layout.action_dim, features = layout.observation_dim;
    Plan out;
    out.actions = rows.leftCols(actions);
    out.observations = rows.middleCols(actions, features);
    // Tokens never run through the model have no estimate yet.
    const int unknown = options_.horizon - plan.estimated;
    if (unknown > 0) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      out.actions.bottomRows(unknown).setConstant(nan);
      out.observations.bottomRows(unknown).setConstant(nan);
    }
    out.levels = levels;
    out.tokens = rows.rightCols(rows.cols() - actions - features);
    out.cost = cost;
    return out;
  }

  Checkpoint checkpoint_;
  std::unique_ptr<TaskCost> cost_;
  PlannerOptions options_;
  worldmodel::Normalizer normalizer_;  // the checkpoint's, on the model's device
  worldmodel::NoiseSchedule schedule_;
  std::unique_ptr<worldmodel::ForwardGraphs> graphs_;  // null: eager calls
  PlanDenoiser denoiser_;
  KvCache cache_;
  RealTokenBuilder real_tokens_;
  at::Generator generator_;

  PlanBatch plan_;
  std::vector<int> plan_levels_;  // levels of the kept plan after the last step
  bool has_plan_ = false;
  bool reset_ = false;
  Queue queue_;
  int64_t plan_step_ = -1;  // the control step the plan (and action_now_) was made at
  Eigen::VectorXd action_now_;
  // The newest optimized step's observation (before the first Act: Reset's).
  Eigen::VectorXd last_observation_;
  Plan plan_out_;
  StepStats stats_;
};

Planner::Planner(const Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost,
                 const PlannerOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint, std::move(cost), options)) {}

Planner::~Planner() = default;

std::unique_ptr<Planner> Planner::FromFile(const std::string& model_path,
                                           const PlannerOptions& options, const std::string& task) {
  options.Validate();
  const c10::Device device =
      worldmodel::ParseDevice(options.device.empty() ? "cpu" : options.device);
  const Checkpoint checkpoint = worldmodel::LoadCheckpoint(model_path, {task, 0}, device);
  return std::make_unique<Planner>(checkpoint, MakeTaskCost(checkpoint.info.task), options);
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
bool Planner::Optimize(std::chrono::steady_clock::time_point deadline) {
  impl_->RequireReset();
  return impl_->Optimize(deadline);
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
