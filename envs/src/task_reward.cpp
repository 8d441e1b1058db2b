#include "task_reward.h"

#include <cmath>
#include <memory>
#include <stdexcept>

#include "dfmpc/task/tolerance.h"
#include "maze_layout.h"

namespace dfmpc::envs {
namespace {

using task::ParseSigmoid;
using task::Sigmoid;
using task::TaskTable;
using task::Tolerance;

const char* TypeName(mjtObj type) {
  switch (type) {
    case mjOBJ_SENSOR:
      return "sensor";
    case mjOBJ_JOINT:
      return "joint";
    case mjOBJ_ACTUATOR:
      return "actuator";
    case mjOBJ_BODY:
      return "body";
    case mjOBJ_CAMERA:
      return "camera";
    default:
      return "object";
  }
}

// The address in sensordata of component `index` of the sensor `table[key]`.
int SensorAddress(const TaskTable& table, const std::string& key, int index, const mjModel* model) {
  const int id = RequireId(model, mjOBJ_SENSOR, table, key);
  if (index < 0 || index >= model->sensor_dim[id]) {
    table.Fail("index", std::to_string(index) + " is outside sensor '" + table.Text(key) +
                            "', which has " + std::to_string(model->sensor_dim[id]) +
                            " component(s)");
  }
  return model->sensor_adr[id] + index;
}

Quantity Feature(const TaskTable& table, const std::string& key, const QuantityScope& scope) {
  const std::string name = table.Text(key);
  const auto found = scope.features->find(name);
  if (found == scope.features->end()) {
    std::string known;
    for (const auto& [feature, read] : *scope.features)
      known += (known.empty() ? "" : ", ") + feature;
    table.Fail(key, "no observation feature '" + name + "' (features: " + known + ")");
  }
  return found->second;
}

std::vector<Quantity> Features(const TaskTable& table, const std::string& key,
                               const QuantityScope& scope) {
  std::vector<Quantity> features;
  const std::vector<std::string> names = table.Texts(key);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto found = scope.features->find(names[i]);
    if (found == scope.features->end()) {
      table.Fail(key, "no observation feature '" + names[i] + "'");
    }
    features.push_back(found->second);
  }
  return features;
}

Quantity Norm(const TaskTable& table, const QuantityScope& scope) {
  const std::vector<Quantity> from = Features(table, "norm", scope);
  std::vector<Quantity> minus;
  if (table.Has("minus")) {
    minus = Features(table, "minus", scope);
    if (minus.size() != from.size()) {
      table.Fail("minus", "needs as many features as norm (" + std::to_string(from.size()) + ")");
    }
  }
  return [from, minus](const mjModel* m, const mjData* d) {
    double sum = 0.0;
    for (std::size_t i = 0; i < from.size(); ++i) {
      const double value = from[i](m, d) - (minus.empty() ? 0.0 : minus[i](m, d));
      sum += value * value;
    }
    return std::sqrt(sum);
  };
}

// The shortest path to the layout's 'G' cell around its '#' walls.
Quantity PathDistance(const TaskTable& table, const QuantityScope& scope) {
  const std::vector<Quantity> position = Features(table, "position", scope);
  if (position.size() != 2) table.Fail("position", "needs two features (x and y)");
  const std::vector<std::string> rows = table.Texts("layout");
  const double cell_size = table.Number("cell_size");
  const double clearance = table.Number("clearance");
  const double resolution = table.Number("resolution");
  table.RejectUnread();
  if (cell_size <= 0.0 || clearance < 0.0 || resolution <= 0.0) {
    table.Fail("cell_size", "cell_size and resolution must be > 0, clearance >= 0");
  }
  std::shared_ptr<const DistanceField> field;
  try {
    const MazeLayout layout(rows, cell_size);
    field = std::make_shared<const DistanceField>(layout, layout.Find('G'), clearance, resolution);
  } catch (const std::exception& error) {
    table.Fail("layout", error.what());
  }
  return [field, position](const mjModel* m, const mjData* d) {
    return field->Distance(Eigen::Vector2d(position[0](m, d), position[1](m, d)));
  };
}

// The term of a reward factor: the quantity, or its tolerance when the
// factor has one.
Quantity Term(const TaskTable& factor, const QuantityScope& scope, const Quantity& success) {
  Quantity quantity = ParseQuantity(factor, scope, success);
  if (!factor.Has("tolerance")) return quantity;
  const TaskTable tolerance = factor.Table("tolerance");
  const std::vector<double> bounds = tolerance.Numbers("bounds");
  const double margin = tolerance.Number("margin", 0.0);
  Sigmoid sigmoid = Sigmoid::kGaussian;
  if (tolerance.Has("sigmoid")) {
    try {
      sigmoid = ParseSigmoid(tolerance.Text("sigmoid"));
    } catch (const std::invalid_argument& error) {
      tolerance.Fail("sigmoid", error.what());
    }
  }
  const double value_at_margin = tolerance.Number("value_at_margin", 0.1);
  tolerance.RejectUnread();
  if (bounds.size() != 2 || bounds[0] > bounds[1]) {
    tolerance.Fail("bounds", "expected [lower, upper] with lower <= upper");
  }
  try {
    Tolerance(bounds[0], bounds[0], bounds[1], margin, sigmoid, value_at_margin);
  } catch (const std::invalid_argument& error) {
    tolerance.Fail("margin", error.what());
  }
  return [quantity, bounds, margin, sigmoid, value_at_margin](const mjModel* m, const mjData* d) {
    const double x = quantity(m, d);
    // An unreachable point (a maze cell walled in) is as far as can be.
    if (!std::isfinite(x)) return 0.0;
    return Tolerance(x, bounds[0], bounds[1], margin, sigmoid, value_at_margin);
  };
}

}  // namespace

int RequireId(const mjModel* model, mjtObj type, const TaskTable& table, const std::string& key) {
  const std::string name = table.Text(key);
  const int id = mj_name2id(model, type, name.c_str());
  if (id < 0) table.Fail(key, std::string("the MJCF has no ") + TypeName(type) + " '" + name + "'");
  return id;
}

Quantity ParseSensorReading(const TaskTable& table, const mjModel* model) {
  const int index = table.Integer("index", 0);
  const int address = SensorAddress(table, "sensor", index, model);
  Quantity reading = [address](const mjModel*, const mjData* d) { return d->sensordata[address]; };
  if (table.Has("minus")) {
    const int minus = SensorAddress(table, "minus", index, model);
    reading = [address, minus](const mjModel*, const mjData* d) {
      return d->sensordata[address] - d->sensordata[minus];
    };
  }
  if (!table.Boolean("log1p", false)) return reading;
  // dm_control's touch features: a contact force spans 0 to thousands of
  // newtons, ln(1 + f) a few units. Odd in x, so any reading stays finite.
  return [reading](const mjModel* m, const mjData* d) {
    const double x = reading(m, d);
    return std::copysign(std::log1p(std::abs(x)), x);
  };
}

Quantity ParseQuantity(const TaskTable& table, const QuantityScope& scope,
                       const Quantity& success) {
  const char* kinds[] = {"feature", "sensor", "action", "norm", "success", "path_distance"};
  std::string kind;
  for (const char* candidate : kinds) {
    if (!table.Has(candidate)) continue;
    if (!kind.empty()) table.Fail(candidate, "give one quantity, not both " + kind + " and this");
    kind = candidate;
  }
  if (kind.empty()) {
    table.Fail("feature",
               "missing: a quantity (feature, sensor, action, norm, success or "
               "path_distance)");
  }
  if (kind == "feature") return Feature(table, "feature", scope);
  if (kind == "sensor") return ParseSensorReading(table, scope.model);
  if (kind == "action") {
    const int actuator = RequireId(scope.model, mjOBJ_ACTUATOR, table, "action");
    return [actuator](const mjModel*, const mjData* d) { return d->ctrl[actuator]; };
  }
  if (kind == "norm") return Norm(table, scope);
  if (kind == "success") {
    if (!table.Boolean("success", false)) table.Fail("success", "may only be true");
    if (!success) table.Fail("success", "the task has no [success] test");
    return success;
  }
  return PathDistance(table.Table("path_distance"), scope);
}

Quantity RewardProduct(const std::vector<TaskTable>& factors, const QuantityScope& scope,
                       const Quantity& success) {
  std::vector<Quantity> terms;
  for (const TaskTable& factor : factors) {
    const Quantity term = Term(factor, scope, success);
    const double offset = factor.Number("offset", 0.0);
    const double weight = factor.Number("weight", 1.0);
    factor.RejectUnread();
    terms.push_back([term, offset, weight](const mjModel* m, const mjData* d) {
      return offset + weight * term(m, d);
    });
  }
  return [terms](const mjModel* model, const mjData* data) {
    double product = 1.0;
    for (const Quantity& factor : terms) product *= factor(model, data);
    return product;
  };
}

}  // namespace dfmpc::envs
