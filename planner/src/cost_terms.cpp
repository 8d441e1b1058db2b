#include "cost_terms.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "expression_term.h"

namespace dfmpc::planner {
namespace {

using task::TaskTable;

// A generic term: observations [B, H, D], actions [B, H, A] -> cost [B, H].
using TensorTerm = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

// Observation feature `name`'s index.
int64_t Feature(const TaskTable& table, const std::string& key,
                const std::vector<std::string>& names) {
  const std::string name = table.Text(key);
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) {
    std::string known;
    for (const std::string& feature : names) known += (known.empty() ? "" : ", ") + feature;
    table.Fail(key, "no observation feature '" + name + "' (features: " + known + ")");
  }
  return found - names.begin();
}

std::vector<int64_t> Features(const TaskTable& table, const std::string& key,
                              const std::vector<std::string>& names, size_t count = 0) {
  std::vector<int64_t> indices;
  for (const std::string& name : table.Texts(key)) {
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) table.Fail(key, "no observation feature '" + name + "'");
    indices.push_back(found - names.begin());
  }
  if (indices.empty() || (count > 0 && indices.size() != count)) {
    table.Fail(key, count > 0 ? "needs " + std::to_string(count) + " features"
                              : "needs at least one feature");
  }
  return indices;
}

double Positive(const TaskTable& table, const std::string& key) {
  const double value = table.Number(key);
  if (value <= 0.0) table.Fail(key, "must be > 0");
  return value;
}

// cos(angle) from a (cos, sin) pair. Predicted pairs need not lie on the unit
// circle; normalizing keeps the cosine in [-1, 1] so that the upright terms
// stay >= 0. The epsilon keeps the gradient finite at (0, 0).
at::Tensor UnitCosine(const at::Tensor& cosine, const at::Tensor& sine) {
  return cosine / at::sqrt(cosine.square() + sine.square() + 1e-6);
}

// Euclidean norm of the last dimension, smoothed so that its gradient at 0
// is finite.
at::Tensor SmoothNorm(const at::Tensor& vector) { return at::sqrt(vector.square().sum(-1) + 1e-6); }

// (1 - cos) / 2 of a (cos, sin) pair: 0 upright, 1 hanging.
TensorTerm Upright(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t cos = Feature(t, "cos", names), sin = Feature(t, "sin", names);
  return [=](const at::Tensor& o, const at::Tensor&) {
    return (1.0 - UnitCosine(o.select(-1, cos), o.select(-1, sin))) / 2.0;
  };
}

// ((feature - target) / scale)^2.
TensorTerm Quadratic(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t feature = Feature(t, "feature", names);
  const double target = t.Number("target", 0.0);
  const double scale = Positive(t, "scale");
  return [=](const at::Tensor& o, const at::Tensor&) {
    const at::Tensor value = o.select(-1, feature);
    return ((target == 0.0 ? value : value - target) / scale).square();
  };
}

// sqrt(((feature - target) / scale)^2 + 1e-6): |x| with a finite gradient at 0.
TensorTerm SmoothAbs(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t feature = Feature(t, "feature", names);
  const double target = t.Number("target", 0.0);
  const double scale = Positive(t, "scale");
  return [=](const at::Tensor& o, const at::Tensor&) {
    return at::sqrt(((o.select(-1, feature) - target) / scale).square() + 1e-6);
  };
}

// The smoothed norm of features (minus others) over `scale`.
TensorTerm Distance(const TaskTable& t, const std::vector<std::string>& names) {
  const std::vector<int64_t> features = Features(t, "features", names);
  const std::vector<int64_t> minus =
      t.Has("minus") ? Features(t, "minus", names, features.size()) : std::vector<int64_t>();
  const double scale = Positive(t, "scale");
  const at::Tensor from = at::tensor(features, at::kLong), to = at::tensor(minus, at::kLong);
  return [=](const at::Tensor& o, const at::Tensor&) {
    at::Tensor vector = o.index_select(-1, from.to(o.device()));
    if (!minus.empty()) vector = vector - o.index_select(-1, to.to(o.device()));
    return SmoothNorm(vector) / scale;
  };
}

// dm_control's sigmoids (dfmpc/task/tolerance.h) on a distance
// `x` >= 0 already divided by the margin, with value v at x = 1.
at::Tensor Sigmoid(const at::Tensor& x, const std::string& sigmoid, double v) {
  constexpr double kPi = 3.14159265358979323846;
  if (sigmoid == "gaussian") return at::exp(-0.5 * (x * std::sqrt(-2.0 * std::log(v))).square());
  if (sigmoid == "hyperbolic") return 1.0 / at::cosh(x * std::acosh(1.0 / v));
  if (sigmoid == "long_tail") return 1.0 / ((x * std::sqrt(1.0 / v - 1.0)).square() + 1.0);
  if (sigmoid == "reciprocal") return 1.0 / (x * (1.0 / v - 1.0) + 1.0);
  if (sigmoid == "cosine") {
    const at::Tensor scaled = at::clamp_max(x * (std::acos(2.0 * v - 1.0) / kPi), 1.0);
    return (1.0 + at::cos(kPi * scaled)) / 2.0;
  }
  if (sigmoid == "linear") return at::relu(1.0 - x * (1.0 - v));
  if (sigmoid == "quadratic") return at::relu(1.0 - (x * std::sqrt(1.0 - v)).square());
  return 1.0 - at::tanh(x * std::atanh(std::sqrt(1.0 - v))).square();  // tanh_squared
}

// 1 - dm_control's tolerance of a feature, or of the distance between
// features (`features`, `minus`, as in `distance`), with the reward's
// `tolerance = { bounds, margin, sigmoid, value_at_margin }` table: 0 within
// the bounds, rising smoothly to 1 - value_at_margin at `margin` outside them.
TensorTerm Tolerance(const TaskTable& t, const std::vector<std::string>& names) {
  const bool of_distance = t.Has("features");
  const int64_t feature = of_distance ? -1 : Feature(t, "feature", names);
  const std::vector<int64_t> features =
      of_distance ? Features(t, "features", names) : std::vector<int64_t>();
  const std::vector<int64_t> minus = of_distance && t.Has("minus")
                                         ? Features(t, "minus", names, features.size())
                                         : std::vector<int64_t>();
  const TaskTable tolerance = t.Table("tolerance");
  const std::vector<double> bounds = tolerance.Numbers("bounds");
  if (bounds.size() != 2 || !(bounds[0] <= bounds[1])) {
    tolerance.Fail("bounds", "expected [lower, upper] with lower <= upper");
  }
  const double margin = tolerance.Number("margin", 0.0);
  if (margin < 0.0) tolerance.Fail("margin", "must be >= 0");
  const std::string sigmoid = tolerance.Text("sigmoid", "gaussian");
  const std::vector<std::string> sigmoids = {"gaussian", "hyperbolic", "long_tail", "reciprocal",
                                             "cosine",   "linear",     "quadratic", "tanh_squared"};
  if (std::find(sigmoids.begin(), sigmoids.end(), sigmoid) == sigmoids.end()) {
    tolerance.Fail("sigmoid", "unknown sigmoid '" + sigmoid + "'");
  }
  const double value_at_margin = tolerance.Number("value_at_margin", 0.1);
  const bool finite_support = sigmoid == "cosine" || sigmoid == "linear" || sigmoid == "quadratic";
  if (!(value_at_margin < 1.0 &&
        (value_at_margin > 0.0 || (finite_support && value_at_margin == 0.0)))) {
    tolerance.Fail("value_at_margin", finite_support ? "must be in [0, 1)" : "must be in (0, 1)");
  }
  tolerance.RejectUnread();
  const at::Tensor from = at::tensor(features, at::kLong), to = at::tensor(minus, at::kLong);
  return [=](const at::Tensor& o, const at::Tensor&) {
    at::Tensor value;
    if (of_distance) {
      at::Tensor vector = o.index_select(-1, from.to(o.device()));
      if (!minus.empty()) vector = vector - o.index_select(-1, to.to(o.device()));
      value = SmoothNorm(vector);
    } else {
      value = o.select(-1, feature);
    }
    const at::Tensor outside = at::relu(bounds[0] - value) + at::relu(value - bounds[1]);
    if (margin == 0.0) return (outside > 0).to(o.scalar_type());
    return 1.0 - Sigmoid(outside / margin, sigmoid, value_at_margin);
  };
}

// The mean squared action component: a tie-breaker that prefers gentle
// plans. It must stay below the task terms near the goal, or the planner
// trades precision for torque.
TensorTerm Action(const TaskTable&, const std::vector<std::string>&) {
  return [](const at::Tensor&, const at::Tensor& a) { return a.square().mean(-1); };
}

// The mean squared change of the action from the plan's previous step (0 at
// its first step).
TensorTerm ActionRate(const TaskTable&, const std::vector<std::string>&) {
  return [](const at::Tensor&, const at::Tensor& a) {
    const int64_t steps = a.size(1);
    const at::Tensor change = a.narrow(1, 1, steps - 1) - a.narrow(1, 0, steps - 1);
    return at::cat({at::zeros_like(a.select(1, 0).sum(-1, true)), change.square().mean(-1)}, 1);
  };
}

using TermParser = TensorTerm (*)(const TaskTable&, const std::vector<std::string>&);

const std::map<std::string, TermParser>& Terms() {
  static const std::map<std::string, TermParser> terms = {
      {"upright", Upright},    {"quadratic", Quadratic}, {"smooth_abs", SmoothAbs},
      {"distance", Distance},  {"action", Action},       {"action_rate", ActionRate},
      {"tolerance", Tolerance}};
  return terms;
}

// The term a table names, unweighted.
CostTerm Term(const TaskTable& table, const CostScope& scope) {
  const std::string kind = table.Text("term");
  if (kind == "expression") return ParseExpressionTerm(table, scope);
  const auto found = Terms().find(kind);
  if (found == Terms().end()) {
    std::string known = "expression";
    for (const auto& [name, parse] : Terms()) known += ", " + name;
    // Terms that became formulas, for a model that carries an older file.
    const bool removed = kind == "pendulum_energy" || kind == "u_maze_path";
    table.Fail("term", "unknown cost term '" + kind + "' (known: " + known + ")" +
                           (removed ? "; it is a formula in the built-in task's file now: `dfmpc "
                                      "task stamp TASK MODEL` gives a model its task's file"
                                    : ""));
  }
  const TensorTerm term = found->second(table, scope.features);
  return [term](const at::Tensor& o, const at::Tensor& a, int64_t) { return term(o, a); };
}

}  // namespace

CostTerm ParseCostTerm(const TaskTable& table, const CostScope& scope) {
  const CostTerm term = Term(table, scope);
  const double weight = table.Number("weight");
  if (weight < 0.0) table.Fail("weight", "must be >= 0");
  const double terminal_weight = table.Number("terminal_weight", weight);
  if (terminal_weight < 0.0) table.Fail("terminal_weight", "must be >= 0");
  table.RejectUnread();
  if (terminal_weight == weight) {
    return [term, weight](const at::Tensor& o, const at::Tensor& a, int64_t first_step) {
      return weight * term(o, a, first_step);
    };
  }
  // The plan's last step weighs `terminal_weight`, the others `weight`.
  return [term, weight, terminal_weight](const at::Tensor& o, const at::Tensor& a,
                                         int64_t first_step) {
    const at::Tensor cost = term(o, a, first_step);
    const int64_t steps = cost.size(1);
    at::Tensor weights = at::full({steps}, weight, cost.options());
    weights[steps - 1] = terminal_weight;
    return cost * weights;
  };
}

}  // namespace dfmpc::planner
