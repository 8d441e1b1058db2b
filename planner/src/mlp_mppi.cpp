#include "dfmpc/planner/mlp_mppi.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dfmpc/planner/model_task.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"

namespace dfmpc::planner {
namespace {

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// Row i holds the weights of the knots that linearly interpolate the spline
// at (fractional) control step steps[i], as the oracle's spline does: the
// knots span steps 0 .. horizon - 1 and the spline is constant beyond.
at::Tensor SplineWeights(const std::vector<double>& steps, int num_knots, int horizon) {
  at::Tensor weights = at::zeros({static_cast<int64_t>(steps.size()), num_knots}, at::kFloat);
  auto w = weights.accessor<float, 2>();
  const int last = num_knots - 1;
  const double span = std::max(1, horizon - 1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double position = std::clamp(steps[i] * last / span, 0.0, static_cast<double>(last));
    const int knot = std::min(static_cast<int>(position), last - 1);
    const double fraction = position - knot;
    w[i][knot] = static_cast<float>(1.0 - fraction);
    w[i][knot + 1] = static_cast<float>(fraction);
  }
  return weights;
}

}  // namespace

void MlpMppiOptions::Validate() const {
  Require(horizon >= 1, "mlp-mppi: horizon must be >= 1, not " + std::to_string(horizon));
  Require(num_knots >= 2 && num_knots <= std::max(2, horizon),
          "mlp-mppi: knots must be in [2, horizon], not " + std::to_string(num_knots));
  Require(num_samples >= 1, "mlp-mppi: samples must be >= 1, not " + std::to_string(num_samples));
  Require(noise_std >= 0.0 && std::isfinite(noise_std),
          "mlp-mppi: noise std must be finite and >= 0, not " + std::to_string(noise_std));
  Require(temperature >= 0.0 && std::isfinite(temperature),
          "mlp-mppi: temperature must be finite and >= 0, not " + std::to_string(temperature));
  Require(std::isfinite(value_weight) && value_weight > 0.0,
          "mlp-mppi: value weight must be finite and > 0, not " + std::to_string(value_weight));
  Require(
      disagreement >= 0.0 && std::isfinite(disagreement),
      "mlp-mppi: disagreement weight must be finite and >= 0, not " + std::to_string(disagreement));
  Require(value_step >= 0 && value_step <= horizon,
          "mlp-mppi: value step must be in 0..horizon = " + std::to_string(horizon) +
              " (0: the middle of the rollout), got " + std::to_string(value_step));
}

struct MlpMppi::Impl {
  Impl(const worldmodel::MlpEnsembleCheckpoint& checkpoint, std::unique_ptr<TaskCost> cost,
       const MlpMppiOptions& options)
      : checkpoint_(checkpoint),
        cost_(std::move(cost)),
        options_(options),
        generator_(at::detail::createCPUGenerator(options.seed)) {
    options_.Validate();
    const worldmodel::TokenLayout& layout = checkpoint_.info.model.config.layout;
    Require(cost_->task() == checkpoint_.info.model.task &&
                cost_->observation_dim() == layout.observation_dim &&
                cost_->action_dim() == layout.action_dim,
            "mlp-mppi: the ensemble (task '" + checkpoint_.info.model.task +
                "') does not fit the cost of task '" + cost_->task() + "'");
    if (!options_.value_model.empty()) {
      const int step =
          options_.value_step > 0 ? options_.value_step : std::max(1, options_.horizon / 2);
      cost_ = WithValue(std::move(cost_), options_.value_model, options_.value_weight, step, "cpu",
                        checkpoint_.info.action_repeat);
    }
    std::vector<double> steps(options_.horizon);
    for (int h = 0; h < options_.horizon; ++h) steps[h] = h;
    interpolation_ = SplineWeights(steps, options_.num_knots, options_.horizon);
    // Warm start: the chosen spline resampled one control step later.
    const double span = std::max(1, options_.horizon - 1);
    std::vector<double> shifted(options_.num_knots);
    for (int k = 0; k < options_.num_knots; ++k) {
      shifted[k] = k * span / (options_.num_knots - 1) + 1.0;
    }
    shift_ = SplineWeights(shifted, options_.num_knots, options_.horizon);
    Reset();
  }

  void Reset() {
    const int action_dim = checkpoint_.info.model.config.layout.action_dim;
    nominal_ = at::zeros({options_.num_knots, action_dim}, at::kFloat);
    previous_action_ = at::zeros({action_dim}, at::kFloat);  // token 0 carries a zero action
  }

  Eigen::VectorXd Act(const Eigen::VectorXd& observation) {
    const worldmodel::TokenLayout& layout = checkpoint_.info.model.config.layout;
    Require(observation.size() == layout.observation_dim && observation.allFinite(),
            "mlp-mppi: observation must hold " + std::to_string(layout.observation_dim) +
                " finite values");
    at::NoGradGuard no_grad;
    const worldmodel::Normalizer& normalizer = checkpoint_.normalizer;
    const int64_t n = options_.num_samples, act = layout.action_dim;
    const at::Tensor o =
        at::from_blob(const_cast<double*>(observation.data()), {observation.size()}, at::kDouble)
            .to(at::kFloat);
    const at::Tensor token =
        normalizer.Normalize(at::cat({previous_action_, o})).unsqueeze(0).expand({n, -1});

    // Candidate 0 is the nominal itself.
    at::Tensor noise = at::randn({n, options_.num_knots, act}, generator_) * options_.noise_std;
    noise[0].zero_();
    const at::Tensor knots = (nominal_.unsqueeze(0) + noise).clamp(-1.0, 1.0);
    const at::Tensor actions = at::matmul(interpolation_, knots);  // [N, H, act]
    const at::Tensor action_mean = normalizer.mean().slice(0, 0, act);
    const at::Tensor action_scale = normalizer.scale().slice(0, 0, act);
    const worldmodel::MlpEnsembleImpl::PenalizedRollout rollout =
        checkpoint_.ensemble->RolloutPenalizingDisagreement(
            token, (actions - action_mean) / action_scale, options_.disagreement);
    const at::Tensor observations = normalizer.Denormalize(rollout.tokens).slice(-1, act);
    // A diverging rollout must lose, never poison the choice.
    const double worst = std::numeric_limits<float>::max();
    const at::Tensor costs = at::nan_to_num(
        cost_->PlanCosts(observations, actions, o, previous_action_).sum(1) + rollout.penalty,
        worst, worst, worst);

    at::Tensor plan;
    if (options_.temperature > 0.0) {
      const at::Tensor weights = at::softmax(-(costs - costs.min()) / options_.temperature, 0);
      plan = (weights.view({n, 1, 1}) * knots).sum(0);
    } else {
      plan = knots[costs.argmin().item<int64_t>()];
    }
    nominal_ = at::matmul(shift_, plan);
    previous_action_ = plan[0].clone();
    const at::Tensor first = previous_action_.to(at::kDouble).contiguous();
    return Eigen::Map<const Eigen::VectorXd>(first.data_ptr<double>(), act);
  }

  worldmodel::MlpEnsembleCheckpoint checkpoint_;
  std::unique_ptr<TaskCost> cost_;
  MlpMppiOptions options_;
  at::Generator generator_;
  at::Tensor interpolation_;    // [H, knots]: actions of the horizon from the knots
  at::Tensor shift_;            // [knots, knots]: the knots one control step later
  at::Tensor nominal_;          // [knots, act]
  at::Tensor previous_action_;  // [act], a_{t-1} of the next token
};

MlpMppi::MlpMppi(const worldmodel::MlpEnsembleCheckpoint& checkpoint,
                 std::unique_ptr<TaskCost> cost, const MlpMppiOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint, std::move(cost), options)) {}

MlpMppi::~MlpMppi() = default;

std::unique_ptr<MlpMppi> MlpMppi::FromFile(const std::string& ensemble_path,
                                           const MlpMppiOptions& options, const std::string& task) {
  if (!task.empty()) return FromFile(ensemble_path, options, task::LoadTaskSpec(task));
  const worldmodel::MlpEnsembleCheckpoint checkpoint = worldmodel::LoadMlpEnsemble(ensemble_path);
  const worldmodel::MlpModelInfo& info = checkpoint.info.model;
  return std::make_unique<MlpMppi>(
      checkpoint,
      MakeTaskCost(CarriedTask(info.task, info.task_file, info.task_mjcf, ensemble_path),
                   checkpoint.info.action_repeat),
      options);
}

std::unique_ptr<MlpMppi> MlpMppi::FromFile(const std::string& ensemble_path,
                                           const MlpMppiOptions& options,
                                           const task::TaskSpec& task) {
  worldmodel::CheckpointExpectation expect;
  expect.task = task.name;
  worldmodel::MlpEnsembleCheckpoint checkpoint = worldmodel::LoadMlpEnsemble(ensemble_path, expect);
  const int action_repeat = checkpoint.info.action_repeat;
  return std::make_unique<MlpMppi>(std::move(checkpoint), MakeTaskCost(task, action_repeat),
                                   options);
}

void MlpMppi::Reset(const Eigen::VectorXd& observation) { impl_->Reset(); }

Eigen::VectorXd MlpMppi::Act(const Eigen::VectorXd& observation) { return impl_->Act(observation); }

int MlpMppi::action_repeat() const { return impl_->checkpoint_.info.action_repeat; }

const MlpMppiOptions& MlpMppi::options() const { return impl_->options_; }

}  // namespace dfmpc::planner
