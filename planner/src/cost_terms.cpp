#include "cost_terms.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace dfmpc::planner {
namespace {

using task::TaskTable;

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

at::Tensor SmoothDistance(const at::Tensor& dx, const at::Tensor& dy) {
  return at::sqrt(dx.square() + dy.square() + 1e-6);
}

// Angular velocity of a [B, H] plan of (cos, sin) pairs, from consecutive
// steps dt seconds apart: the sine of the angle step (the cross product of
// the unit pairs) over dt. The sine is within 0.6% of the angle up to the
// pendulum's top speed at dt = 0.02 s (9 rad/s, 0.18 rad a step), and smooth
// everywhere, unlike atan2. The first step repeats the second's estimate; a
// one-step plan gets 0.
at::Tensor FiniteDifferenceVelocity(const at::Tensor& cosine, const at::Tensor& sine, double dt) {
  const int64_t steps = cosine.size(-1);
  if (steps < 2) return at::zeros_like(cosine);
  const at::Tensor c0 = cosine.narrow(-1, 0, steps - 1), s0 = sine.narrow(-1, 0, steps - 1);
  const at::Tensor c1 = cosine.narrow(-1, 1, steps - 1), s1 = sine.narrow(-1, 1, steps - 1);
  const at::Tensor norms =
      at::sqrt((c0.square() + s0.square()) * (c1.square() + s1.square()) + 1e-6);
  const at::Tensor velocity = (c0 * s1 - s0 * c1) / norms / dt;
  return at::cat({velocity.narrow(-1, 0, 1), velocity}, -1);
}

// (1 - cos) / 2 of a (cos, sin) pair: 0 upright, 1 hanging.
CostTerm Upright(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t cos = Feature(t, "cos", names), sin = Feature(t, "sin", names);
  return [=](const at::Tensor& o, const at::Tensor&) {
    return (1.0 - UnitCosine(o.select(-1, cos), o.select(-1, sin))) / 2.0;
  };
}

// A pendulum's energy gap to upright at rest, in units of the bottom-to-top
// gap: linear in a shortfall, and a surplus at `surplus_rate` of that. A
// squared gap has no slope at the target: a swing that stops 30 degrees short
// of upright lacks 6.7% of the energy and costs 0.0045, too little to prefer
// the plans that pump, and it charged the surplus that a damped pendulum
// needs at the bottom to arrive at the top in full (hinge damping x1.3 scored
// 0). With no charge on the surplus, an underdamped pendulum spun through the
// top instead (damping x0.5: mean 314 on three seeds, 802 at a quarter;
// docs/design.md). Without a `velocity` feature, the velocity is estimated
// from consecutive plan steps `dt` seconds apart.
CostTerm PendulumEnergy(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t cos = Feature(t, "cos", names), sin = Feature(t, "sin", names);
  const bool has_velocity = t.Has("velocity");
  const int64_t velocity = has_velocity ? Feature(t, "velocity", names) : -1;
  const double dt = has_velocity ? 0.0 : Positive(t, "dt");
  const double inertia = Positive(t, "inertia");
  const double max_potential = Positive(t, "max_potential");
  const double surplus_rate = t.Number("surplus_rate");
  if (surplus_rate < 0.0) t.Fail("surplus_rate", "must be >= 0");
  return [=](const at::Tensor& o, const at::Tensor&) {
    const at::Tensor cosine = UnitCosine(o.select(-1, cos), o.select(-1, sin));
    const at::Tensor speed =
        has_velocity ? o.select(-1, velocity)
                     : FiniteDifferenceVelocity(o.select(-1, cos), o.select(-1, sin), dt);
    const at::Tensor energy = 0.5 * inertia * speed.square() + max_potential * cosine;
    const at::Tensor gap = (energy - max_potential) / (2.0 * max_potential);
    return at::relu(-gap) + surplus_rate * at::relu(gap);
  };
}

// ((feature - target) / scale)^2.
CostTerm Quadratic(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t feature = Feature(t, "feature", names);
  const double target = t.Number("target", 0.0);
  const double scale = Positive(t, "scale");
  return [=](const at::Tensor& o, const at::Tensor&) {
    const at::Tensor value = o.select(-1, feature);
    return ((target == 0.0 ? value : value - target) / scale).square();
  };
}

// sqrt(((feature - target) / scale)^2 + 1e-6): |x| with a finite gradient at 0.
CostTerm SmoothAbs(const TaskTable& t, const std::vector<std::string>& names) {
  const int64_t feature = Feature(t, "feature", names);
  const double target = t.Number("target", 0.0);
  const double scale = Positive(t, "scale");
  return [=](const at::Tensor& o, const at::Tensor&) {
    return at::sqrt(((o.select(-1, feature) - target) / scale).square() + 1e-6);
  };
}

// The smoothed norm of features (minus others) over `scale`.
CostTerm Distance(const TaskTable& t, const std::vector<std::string>& names) {
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

// dm_control's sigmoids (envs/include/dfmpc/envs/tolerance.h) on a distance
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
CostTerm Tolerance(const TaskTable& t, const std::vector<std::string>& names) {
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
CostTerm Action(const TaskTable&, const std::vector<std::string>&) {
  return [](const at::Tensor&, const at::Tensor& a) { return a.square().mean(-1); };
}

// The mean squared change of the action from the plan's previous step (0 at
// its first step).
CostTerm ActionRate(const TaskTable&, const std::vector<std::string>&) {
  return [](const at::Tensor&, const at::Tensor& a) {
    const int64_t steps = a.size(1);
    const at::Tensor change = a.narrow(1, 1, steps - 1) - a.narrow(1, 0, steps - 1);
    return at::cat({at::zeros_like(a.select(1, 0).sum(-1, true)), change.square().mean(-1)}, 1);
  };
}

// The shortest way to the goal around a U-maze's wall, for the built-in
// pointmass_maze (envs/tasks/pointmass_maze/task.toml): the wall between the
// start's corridor (y < -gate) and the goal's (y > gate) ends at x = gate;
// the way round passes two corner waypoints (corner, -corner) and (corner,
// corner) kept off it for the ball.
CostTerm UMazePath(const TaskTable& t, const std::vector<std::string>& names) {
  const std::vector<int64_t> position = Features(t, "position", names, 2);
  const std::vector<int64_t> goal = Features(t, "goal", names, 2);
  const double corner = Positive(t, "corner"), gate = t.Number("gate");
  const double scale = Positive(t, "scale");
  return [=](const at::Tensor& o, const at::Tensor&) {
    const at::Tensor x = o.select(-1, position[0]), y = o.select(-1, position[1]);
    const at::Tensor goal_x = o.select(-1, goal[0]), goal_y = o.select(-1, goal[1]);
    const at::Tensor upper_corner_to_goal = SmoothDistance(goal_x - corner, goal_y - corner);
    const at::Tensor direct = SmoothDistance(goal_x - x, goal_y - y);
    const at::Tensor via_upper_corner =
        SmoothDistance(x - corner, y - corner) + upper_corner_to_goal;
    const at::Tensor via_both_corners =
        SmoothDistance(x - corner, y + corner) + 2.0 * corner + upper_corner_to_goal;
    const at::Tensor distance =
        at::where(y > gate, direct, at::where(x > gate, via_upper_corner, via_both_corners));
    return distance / scale;
  };
}

using TermParser = CostTerm (*)(const TaskTable&, const std::vector<std::string>&);

const std::map<std::string, TermParser>& Terms() {
  static const std::map<std::string, TermParser> terms = {
      {"upright", Upright},        {"pendulum_energy", PendulumEnergy},
      {"quadratic", Quadratic},    {"smooth_abs", SmoothAbs},
      {"distance", Distance},      {"action", Action},
      {"action_rate", ActionRate}, {"u_maze_path", UMazePath},
      {"tolerance", Tolerance}};
  return terms;
}

}  // namespace

CostTerm ParseCostTerm(const TaskTable& table, const std::vector<std::string>& feature_names) {
  const std::string kind = table.Text("term");
  const auto found = Terms().find(kind);
  if (found == Terms().end()) {
    std::string known;
    for (const auto& [name, parse] : Terms()) known += (known.empty() ? "" : ", ") + name;
    table.Fail("term", "unknown cost term '" + kind + "' (known: " + known + ")");
  }
  const CostTerm term = found->second(table, feature_names);
  const double weight = table.Number("weight");
  if (weight < 0.0) table.Fail("weight", "must be >= 0");
  const double terminal_weight = table.Number("terminal_weight", weight);
  if (terminal_weight < 0.0) table.Fail("terminal_weight", "must be >= 0");
  table.RejectUnread();
  if (terminal_weight == weight) {
    return [term, weight](const at::Tensor& o, const at::Tensor& a) { return weight * term(o, a); };
  }
  // The plan's last step weighs `terminal_weight`, the others `weight`.
  return [term, weight, terminal_weight](const at::Tensor& o, const at::Tensor& a) {
    const at::Tensor cost = term(o, a);
    const int64_t steps = cost.size(1);
    at::Tensor weights = at::full({steps}, weight, cost.options());
    weights[steps - 1] = terminal_weight;
    return cost * weights;
  };
}

}  // namespace dfmpc::planner
