#include "dfmpc/envs/predictive_sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "dfmpc/task/task_spec.h"
#include "random.h"

namespace dfmpc::envs {
namespace {

void Validate(const PredictiveSamplingOptions& options) {
  if (options.horizon < 1) throw std::invalid_argument("predictive sampling: horizon must be >= 1");
  if (options.num_knots < 2)
    throw std::invalid_argument("predictive sampling: num_knots must be >= 2");
  if (options.num_samples < 1)
    throw std::invalid_argument("predictive sampling: num_samples must be >= 1");
  if (!(options.noise_std >= 0.0))
    throw std::invalid_argument("predictive sampling: noise_std must be >= 0");
  if (options.num_threads < 1)
    throw std::invalid_argument("predictive sampling: num_threads must be >= 1");
}

}  // namespace

namespace {

constexpr int kMaxOracleHorizon = 10000;  // ten dm_control episodes
constexpr int kMaxOracleKnots = 1000;
constexpr int kMaxOracleSamples = 4096;

}  // namespace

PredictiveSamplingOptions OracleOptions(const std::string& task, int action_repeat) {
  return OracleOptions(task::LoadTaskSpec(task), action_repeat);
}

PredictiveSamplingOptions OracleOptions(const task::TaskSpec& task, int action_repeat) {
  if (action_repeat < 1) throw std::invalid_argument("oracle: action_repeat must be >= 1");
  PredictiveSamplingOptions options;
  if (task.root.Has("oracle")) {
    const task::TaskTable oracle = task.root.Table("oracle");
    options.horizon = oracle.Integer("horizon", options.horizon);
    options.num_knots = oracle.Integer("knots", options.num_knots);
    options.num_samples = oracle.Integer("samples", options.num_samples);
    options.noise_std = oracle.Number("noise_std", options.noise_std);
    oracle.RejectUnread();
    // Upper bounds keep a control step's rollouts (samples x horizon
    // physics steps) to seconds, not hours.
    if (options.horizon < 1 || options.horizon > kMaxOracleHorizon) {
      oracle.Fail("horizon",
                  "must be in 1.." + std::to_string(kMaxOracleHorizon) + " physics steps");
    }
    if (options.num_knots < 2 || options.num_knots > kMaxOracleKnots) {
      oracle.Fail("knots", "must be in 2.." + std::to_string(kMaxOracleKnots));
    }
    if (options.num_samples < 1 || options.num_samples > kMaxOracleSamples) {
      oracle.Fail("samples", "must be in 1.." + std::to_string(kMaxOracleSamples));
    }
    if (!(options.noise_std >= 0.0 && options.noise_std <= 10.0)) {
      oracle.Fail("noise_std", "must be in [0, 10] (actions are in [-1, 1])");
    }
  }
  options.horizon = std::max(
      2, static_cast<int>(std::lround(static_cast<double>(options.horizon) / action_repeat)));
  options.num_knots = std::min(options.num_knots, options.horizon);
  return options;
}

PredictiveSamplingPolicy::PredictiveSamplingPolicy(const Env& env,
                                                   const PredictiveSamplingOptions& options)
    : env_(env), options_(options), rng_(std::make_unique<Rng>(options.seed)) {
  Validate(options);
  for (int i = 0; i < options.num_threads; ++i) sims_.push_back(env.Clone());
  nominal_ = Eigen::MatrixXd::Zero(options.num_knots, env.action_spec().size());
  candidates_.assign(options.num_samples, nominal_);
  values_.assign(options.num_samples, 0.0);
}

PredictiveSamplingPolicy::~PredictiveSamplingPolicy() = default;

void PredictiveSamplingPolicy::Reset(const Eigen::VectorXd& observation) { nominal_.setZero(); }

Eigen::VectorXd PredictiveSamplingPolicy::ActionAt(const Eigen::MatrixXd& knots,
                                                   double step) const {
  const int last = options_.num_knots - 1;
  if (options_.interpolation == Interpolation::kZeroOrder) {
    const int knot = static_cast<int>(std::floor(step * options_.num_knots / options_.horizon));
    return knots.row(std::clamp(knot, 0, last)).transpose();
  }
  const double span = std::max(1, options_.horizon - 1);
  const double position = std::clamp(step * last / span, 0.0, static_cast<double>(last));
  const int knot = std::min(static_cast<int>(position), last - 1);
  const double fraction = position - knot;
  return ((1.0 - fraction) * knots.row(knot) + fraction * knots.row(knot + 1)).transpose();
}

double PredictiveSamplingPolicy::Rollout(Env* sim, const Eigen::VectorXd& start,
                                         const Eigen::MatrixXd& knots) {
  sim->set_state(start);
  double value = 0.0;
  for (int t = 0; t < options_.horizon; ++t) {
    sim->Step(ActionAt(knots, t));
    value += sim->ShapedReward();
  }
  return value;
}

Eigen::VectorXd PredictiveSamplingPolicy::Act(const Eigen::VectorXd& observation) {
  const Eigen::VectorXd start = env_.state();
  candidates_[0] = nominal_;
  for (int i = 1; i < options_.num_samples; ++i) {
    Eigen::MatrixXd& candidate = candidates_[i];
    for (int k = 0; k < candidate.rows(); ++k) {
      for (int a = 0; a < candidate.cols(); ++a) {
        candidate(k, a) =
            std::clamp(nominal_(k, a) + options_.noise_std * rng_->Normal(), -1.0, 1.0);
      }
    }
  }
  // Candidate i runs on thread i % num_threads: the result does not depend on timing.
  auto work = [&](int thread) {
    for (int i = thread; i < options_.num_samples; i += options_.num_threads) {
      values_[i] = Rollout(sims_[thread].get(), start, candidates_[i]);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < options_.num_threads; ++t) threads.emplace_back(work, t);
  work(0);
  for (std::thread& thread : threads) thread.join();

  const int best =
      static_cast<int>(std::max_element(values_.begin(), values_.end()) - values_.begin());
  best_value_ = values_[best];
  const Eigen::MatrixXd& plan = candidates_[best];
  const Eigen::VectorXd action = ActionAt(plan, 0.0);
  // Warm start: the winning spline, resampled one control step later.
  const int last = options_.num_knots - 1;
  for (int k = 0; k <= last; ++k) {
    const double knot_step =
        options_.interpolation == Interpolation::kZeroOrder
            ? static_cast<double>(k) * options_.horizon / options_.num_knots
            : static_cast<double>(k) * std::max(1, options_.horizon - 1) / last;
    nominal_.row(k) = ActionAt(plan, knot_step + 1.0).transpose();
  }
  return action;
}

}  // namespace dfmpc::envs
