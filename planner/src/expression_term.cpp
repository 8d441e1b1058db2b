#include "expression_term.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include "dfmpc/task/expression.h"

namespace dfmpc::planner {
namespace {

using task::TaskTable;

// The formula's variables, in this order: the features, the actions, both
// again one step before, `dt` and `step`.
struct Layout {
  int features = 0;
  int actions = 0;

  int Feature(int i) const { return i; }
  int Action(int k) const { return features + k; }
  int PreviousFeature(int i) const { return features + actions + i; }
  int PreviousAction(int k) const { return 2 * features + actions + k; }
  int Dt() const { return 2 * (features + actions); }
  int Step() const { return Dt() + 1; }
  int size() const { return Step() + 1; }
};

std::vector<std::string> VariableNames(const CostScope& scope) {
  std::vector<std::string> names = scope.features;
  for (const std::string& actuator : scope.actuators) names.push_back("action." + actuator);
  for (const std::string& feature : scope.features) names.push_back("previous." + feature);
  for (const std::string& actuator : scope.actuators) {
    names.push_back("previous.action." + actuator);
  }
  names.push_back("dt");
  names.push_back("step");
  return names;
}

// [B, T] values one step before each of `values` [B, T]: the first column
// repeats itself.
at::Tensor Previous(const at::Tensor& values) {
  const int64_t steps = values.size(1);
  return at::cat({values.narrow(1, 0, 1), values.narrow(1, 0, steps - 1)}, 1);
}

class ExpressionTerm {
 public:
  ExpressionTerm(task::Expression expression, Layout layout, double dt)
      : expression_(std::move(expression)), layout_(layout), dt_(dt) {}

  at::Tensor operator()(const at::Tensor& observations, const at::Tensor& actions,
                        int64_t first_step) {
    const int64_t batch = observations.size(0), steps = observations.size(1);
    const int count = static_cast<int>(batch * steps);
    // The values of each variable it reads at every (candidate, step), as
    // differentiable [B, T] tensors of the inputs; undefined for the others
    // and for `dt` and `step`.
    std::vector<at::Tensor> sources(layout_.size());
    for (int i = 0; i < layout_.features; ++i) {
      if (expression_.Reads(layout_.Feature(i))) {
        sources[layout_.Feature(i)] = observations.select(-1, i);
      }
      if (expression_.Reads(layout_.PreviousFeature(i))) {
        sources[layout_.PreviousFeature(i)] = Previous(observations.select(-1, i));
      }
    }
    for (int k = 0; k < layout_.actions; ++k) {
      if (expression_.Reads(layout_.Action(k))) sources[layout_.Action(k)] = actions.select(-1, k);
      if (expression_.Reads(layout_.PreviousAction(k))) {
        sources[layout_.PreviousAction(k)] = Previous(actions.select(-1, k));
      }
    }
    const at::Tensor values = at::empty({batch, steps}, at::TensorOptions(at::kDouble));
    const bool differentiate =
        at::GradMode::is_enabled() && (observations.requires_grad() || actions.requires_grad());
    std::vector<std::pair<at::Tensor, at::Tensor>> slopes;  // (source, d value / d source)
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      expression_.Reserve(count);
      Fill(sources, batch, steps, first_step);
      double* result = values.data_ptr<double>();
      expression_.EvaluateColumns(count, result);
      if (differentiate) {
        for (int i = 0; i < layout_.size(); ++i) {
          if (!expression_.Reads(i) || !sources[i].defined()) continue;
          slopes.emplace_back(sources[i], CentralDifference(i, count).view({batch, steps}));
        }
      }
    }
    at::Tensor cost = values.to(observations.options());
    // value + slope * (x - x.detach()): the value, with the slope as its
    // gradient with respect to x.
    for (const auto& [source, slope] : slopes) {
      cost = cost + slope.to(observations.options()) * (source - source.detach());
    }
    return cost;
  }

 private:
  // Writes every variable the formula reads into its column.
  void Fill(const std::vector<at::Tensor>& sources, int64_t batch, int64_t steps,
            int64_t first_step) {
    for (int i = 0; i < layout_.size(); ++i) {
      if (!expression_.Reads(i)) continue;
      double* column = expression_.Column(i);
      if (i == layout_.Dt()) {
        std::fill_n(column, batch * steps, dt_);
      } else if (i == layout_.Step()) {
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t t = 0; t < steps; ++t) {
            column[b * steps + t] = static_cast<double>(first_step + t);
          }
        }
      } else {
        at::from_blob(column, {batch, steps}, at::TensorOptions(at::kDouble))
            .copy_(sources[i].detach());
      }
    }
  }

  // d formula / d variable `index` at every point, by central differences
  // of 1e-6 relative (about 1e-10 of error in double precision); the
  // column is restored after.
  at::Tensor CentralDifference(int index, int count) {
    double* column = expression_.Column(index);
    const std::vector<double> x(column, column + count);
    std::vector<double> step(count), above(count), below(count);
    for (int j = 0; j < count; ++j) step[j] = 1e-6 * std::max(1.0, std::abs(x[j]));
    for (int j = 0; j < count; ++j) column[j] = x[j] + step[j];
    expression_.EvaluateColumns(count, above.data());
    for (int j = 0; j < count; ++j) column[j] = x[j] - step[j];
    expression_.EvaluateColumns(count, below.data());
    std::copy(x.begin(), x.end(), column);
    at::Tensor slope = at::empty({count}, at::TensorOptions(at::kDouble));
    double* out = slope.data_ptr<double>();
    for (int j = 0; j < count; ++j) out[j] = (above[j] - below[j]) / (2.0 * step[j]);
    return slope;
  }

  std::mutex mutex_;  // the formula's storage is written at every call
  task::Expression expression_;
  Layout layout_;
  double dt_;
};

// Checks the formula at points the task can reach: features uniform in
// their ranges, actions in [-1, 1], steps 0-63.
void Probe(task::Expression& expression, const CostScope& scope, const Layout& layout, double dt) {
  std::mt19937_64 random(0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> point(layout.size());
  for (int probe = 0; probe < 16; ++probe) {
    for (int i = 0; i < layout.features; ++i) {
      const double span = scope.upper[i] - scope.lower[i];
      point[layout.Feature(i)] = scope.lower[i] + span * unit(random);
      point[layout.PreviousFeature(i)] = scope.lower[i] + span * unit(random);
    }
    for (int k = 0; k < layout.actions; ++k) {
      point[layout.Action(k)] = 2.0 * unit(random) - 1.0;
      point[layout.PreviousAction(k)] = 2.0 * unit(random) - 1.0;
    }
    point[layout.Dt()] = dt;
    point[layout.Step()] = std::floor(64.0 * unit(random));
    expression.Probe(point.data());
  }
}

}  // namespace

CostTerm ParseExpressionTerm(const TaskTable& table, const CostScope& scope) {
  const Layout layout{static_cast<int>(scope.features.size()),
                      static_cast<int>(scope.actuators.size())};
  task::Expression expression(table.Text("expression"), VariableNames(scope),
                              table.Where("expression"));
  double dt = 0.0;
  if (expression.Reads(layout.Dt())) {
    try {
      dt = scope.control_timestep();
    } catch (const std::invalid_argument& error) {
      table.Fail("expression", std::string("reads dt: ") + error.what());
    }
  }
  Probe(expression, scope, layout, dt);
  auto term = std::make_shared<ExpressionTerm>(std::move(expression), layout, dt);
  return [term](const at::Tensor& o, const at::Tensor& a, int64_t first_step) {
    return (*term)(o, a, first_step);
  };
}

}  // namespace dfmpc::planner
