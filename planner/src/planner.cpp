#include "dfmpc/planner/planner.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/transformer.h"
#include "plan_denoiser.h"
#include "plan_schedule.h"

namespace dfmpc::planner {

using worldmodel::Checkpoint;
using worldmodel::KvCache;
using worldmodel::SchedulingMatrix;

namespace {

at::Tensor ToTensor(const Eigen::VectorXd& v) {
  return at::tensor(std::vector<double>(v.data(), v.data() + v.size()), at::kDouble).to(at::kFloat);
}

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
  // Checks that the schedule exists (a fresh warm token must enter at level K).
  if (options.mode == PlanMode::kWarm) {
    WarmProgram(options.num_levels, options.horizon, options.uncertainty, options.calls_per_step,
                options.renoise_levels);
  }
  return options;
}

}  // namespace

class Planner::Impl {
 public:
  Impl(const Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost, const PlannerOptions& options)
      : checkpoint_(checkpoint),
        cost_(std::move(cost)),
        options_(Resolve(options, checkpoint)),
        schedule_(checkpoint.info.num_timesteps, checkpoint.info.beta),
        denoiser_(*checkpoint_.model, schedule_,
                  DenoiseOptions{options_.num_levels, checkpoint.info.prediction, options_.eta,
                                 options_.guidance_scale}),
        cache_(CacheOptions()),
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
    // The planner only needs gradients with respect to plan tokens.
    for (at::Tensor& parameter : checkpoint_.model->parameters()) {
      parameter.set_requires_grad(false);
    }
  }

  void Reset(const Eigen::VectorXd& observation) {
    CheckObservation(observation);
    c10::InferenceMode inference(InferenceAllowed());
    at::NoGradGuard no_grad;
    cache_.Clear();
    generator_ = at::detail::createCPUGenerator(options_.seed);
    has_plan_ = false;
    steps_ = 0;
    last_action_ = Eigen::VectorXd::Zero(action_dim());
    // The first token carries a zero action and a zero change, as in training.
    newest_real_ = RealToken(observation, observation);
    last_observation_ = observation;
    reset_ = true;
  }

  Eigen::VectorXd Act(const Eigen::VectorXd& observation) {
    const auto start = std::chrono::steady_clock::now();
    if (!reset_) throw std::invalid_argument("planner: Act called before Reset");
    CheckObservation(observation);
    c10::InferenceMode inference(InferenceAllowed());
    at::NoGradGuard no_grad;
    stats_ = StepStats{};
    if (steps_ > 0) newest_real_ = RealToken(observation, last_observation_);
    last_observation_ = observation;

    const bool warm = options_.mode == PlanMode::kWarm && has_plan_;
    const SchedulingMatrix program =
        warm ? WarmProgram(options_.num_levels, options_.horizon, options_.uncertainty,
                           options_.calls_per_step, options_.renoise_levels)
             : FromNoiseProgram(options_.num_levels, options_.horizon, options_.uncertainty,
                                /*complete=*/options_.mode == PlanMode::kReplan);
    if (warm) {
      ShiftPlan(program);
    } else {
      StartFromNoise();
    }
    const DenoiseCounts counts = denoiser_.Run(
        program, plan_, cache_, generator_,
        [this](const at::Tensor& prefix) { return PrefixCost(prefix); }, newest_real_);
    newest_real_ = at::Tensor();  // now in the context cache
    cache_.RollbackScratch();
    stats_.calls = counts.calls;
    stats_.token_forwards += counts.token_forwards;

    const Eigen::VectorXd action = Choose(program);
    last_action_ = action;
    has_plan_ = true;
    ++steps_;
    stats_.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return action;
  }

  const Plan& plan() const { return plan_out_; }
  const StepStats& last_step() const { return stats_; }
  const PlannerOptions& options() const { return options_; }
  const std::string& task() const { return checkpoint_.info.task; }
  int observation_dim() const { return checkpoint_.info.layout.observation_dim; }
  int action_dim() const { return checkpoint_.info.layout.action_dim; }
  int action_repeat() const { return checkpoint_.info.action_repeat; }
  int64_t steps() const { return steps_; }
  const KvCache& context_cache() const { return cache_; }

 private:
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

  void CheckObservation(const Eigen::VectorXd& observation) const {
    if (observation.size() != observation_dim()) {
      throw std::invalid_argument("planner: observation has " + std::to_string(observation.size()) +
                                  " entries, the " + task() + " model expects " +
                                  std::to_string(observation_dim()));
    }
    if (!observation.allFinite()) {
      throw std::invalid_argument("planner: observation contains NaN or infinite values");
    }
  }

  // Appends the real token [a_{s-1}, o_s, o_s - o_{s-1}] with one forward.
  // Without guidance nothing needs autograd, and inference mode also skips
  // the version counting and view tracking that dominate a small op's cost.
  // Plan and cache tensors are then inference tensors, so a planner never
  // mixes the two modes: guidance is fixed by its options.
  bool InferenceAllowed() const { return options_.guidance_scale == 0.0; }

  // The real token [a_{s-1}, o_s, o_s - o_{s-1}], normalized, [1, 1, d].
  at::Tensor RealToken(const Eigen::VectorXd& observation, const Eigen::VectorXd& previous) const {
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    Eigen::VectorXd token(token_dim());
    token << last_action_, observation;
    if (layout.observation_deltas) token.tail(layout.observation_dim) = observation - previous;
    return checkpoint_.normalizer.Normalize(ToTensor(token).to(device())).view({1, 1, -1});
  }

  at::Tensor Noise(int64_t tokens) {
    return at::randn({options_.candidates, tokens, token_dim()}, generator_,
                     at::TensorOptions().dtype(at::kFloat))
        .to(device());
  }

  void StartFromNoise() {
    plan_.tokens = Noise(options_.horizon);
    plan_.clean_estimate = at::zeros_like(plan_.tokens);
    plan_.estimated = 0;
  }

  // Drops the executed token, appends a pure-noise one, and re-noises every
  // token from its shifted resting level to the program's first row.
  void ShiftPlan(const SchedulingMatrix& program) {
    const int horizon = options_.horizon;
    const at::Tensor kept = plan_.tokens.narrow(1, 1, horizon - 1);
    plan_.tokens = at::cat({kept, Noise(1)}, 1);
    plan_.clean_estimate = at::cat({plan_.clean_estimate.narrow(1, 1, horizon - 1),
                                    at::zeros_like(plan_.tokens.narrow(1, 0, 1))},
                                   1);
    plan_.estimated = std::max(0, plan_.estimated - 1);
    if (options_.calls_per_step == 1 && options_.renoise_levels == 0) return;
    // Forward diffusion from level a to level b >= a: scale by
    // sqrt(ab_b / ab_a) and add noise of variance 1 - ab_b / ab_a.
    std::vector<double> keep(horizon, 1.0);
    for (int t = 0; t + 1 < horizon; ++t) {
      const double from = LevelAlphaBar(plan_levels_[t + 1]);
      keep[t] = LevelAlphaBar(program.level(0, t)) / from;
    }
    keep[horizon - 1] = 1.0;  // the fresh token is pure noise already
    const at::Tensor ratio =
        at::tensor(keep, at::kDouble).view({1, horizon, 1}).to(device(), at::kFloat);
    plan_.tokens = ratio.sqrt() * plan_.tokens + (1 - ratio).sqrt() * Noise(horizon);
  }

  double LevelAlphaBar(int level) const {
    return schedule_.AlphaBar(schedule_.LevelTimestep(level, options_.num_levels));
  }

  // Summed task cost [N] of normalized clean plan prefixes [N, n, d].
  at::Tensor PrefixCost(const at::Tensor& prefix) const {
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    const at::Tensor tokens = checkpoint_.normalizer.Denormalize(prefix);
    const at::Tensor previous =
        ToTensor(last_observation_).to(device()).expand({prefix.size(0), layout.observation_dim});
    const at::Tensor observations = worldmodel::TokenObservations(layout, tokens, previous);
    const at::Tensor actions = tokens.narrow(-1, 0, layout.action_dim);
    return cost_->StepCosts(observations, actions).sum(1);
  }

  // Scores the candidates, keeps the chosen plan for every candidate slot and
  // returns the action to execute.
  Eigen::VectorXd Choose(const SchedulingMatrix& program) {
    const int estimated = std::max(1, plan_.estimated);
    const at::Tensor costs = PrefixCost(plan_.clean_estimate.narrow(1, 0, estimated));
    const int64_t best = costs.argmin().item<int64_t>();
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    const at::Tensor first_actions = checkpoint_.normalizer.Denormalize(plan_.tokens.select(1, 0))
                                         .narrow(-1, 0, layout.action_dim);  // [N, act]
    at::Tensor action = first_actions[best];
    if (options_.selection == Selection::kMppi) {
      const at::Tensor weights = at::softmax(-(costs - costs.min()) / options_.temperature, 0);
      action = (weights.unsqueeze(1) * first_actions).sum(0);
    }
    plan_.tokens = plan_.tokens.narrow(0, best, 1).expand_as(plan_.tokens).clone();
    plan_.clean_estimate =
        plan_.clean_estimate.narrow(0, best, 1).expand_as(plan_.clean_estimate).clone();
    plan_levels_.assign(options_.horizon, 0);
    for (int t = 0; t < options_.horizon; ++t) {
      plan_levels_[t] = program.level(program.rows() - 1, t);
    }
    Describe(costs[best].item<double>());
    return ToEigen(action.clamp(-1.0, 1.0).view({1, -1})).row(0).transpose();
  }

  // Fills plan_out_ from the kept plan (candidate 0 after Choose).
  void Describe(double cost) {
    const worldmodel::TokenLayout& layout = checkpoint_.info.layout;
    const at::Tensor estimate = checkpoint_.normalizer.Denormalize(plan_.clean_estimate[0]);
    const at::Tensor observations =
        worldmodel::TokenObservations(layout, estimate, ToTensor(last_observation_).to(device()));
    plan_out_.actions = ToEigen(estimate.narrow(-1, 0, layout.action_dim));
    plan_out_.observations = ToEigen(observations);
    // Tokens never run through the model have no estimate yet.
    const int unknown = options_.horizon - plan_.estimated;
    if (unknown > 0) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      plan_out_.actions.bottomRows(unknown).setConstant(nan);
      plan_out_.observations.bottomRows(unknown).setConstant(nan);
    }
    plan_out_.levels = plan_levels_;
    plan_out_.tokens = ToEigen(plan_.tokens[0]);
    plan_out_.cost = cost;
  }

  Checkpoint checkpoint_;
  std::unique_ptr<TaskCost> cost_;
  PlannerOptions options_;
  worldmodel::NoiseSchedule schedule_;
  PlanDenoiser denoiser_;
  KvCache cache_;
  at::Generator generator_;

  PlanBatch plan_;
  std::vector<int> plan_levels_;  // levels of the kept plan after the last step
  bool has_plan_ = false;
  bool reset_ = false;
  int64_t steps_ = 0;
  Eigen::VectorXd last_observation_;
  Eigen::VectorXd last_action_;
  at::Tensor newest_real_;  // [1, 1, d]: observed, not yet in the cache
  Plan plan_out_;
  StepStats stats_;
};

Planner::Planner(const Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost,
                 const PlannerOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint, std::move(cost), options)) {}

Planner::~Planner() = default;

std::unique_ptr<Planner> Planner::FromFile(const std::string& model_path,
                                           const PlannerOptions& options, const std::string& task) {
  const Checkpoint checkpoint = worldmodel::LoadCheckpoint(model_path, {task, 0});
  return std::make_unique<Planner>(checkpoint, MakeTaskCost(checkpoint.info.task), options);
}

void Planner::Reset(const Eigen::VectorXd& observation) { impl_->Reset(observation); }
Eigen::VectorXd Planner::Act(const Eigen::VectorXd& observation) { return impl_->Act(observation); }
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
