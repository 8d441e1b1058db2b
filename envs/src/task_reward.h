// The quantities a task file's rewards and success test read from the
// simulation, and the reward as a product of factors `offset + weight *
// term`, where the term is a quantity or dm_control's tolerance of one (a
// reward may also be a formula: reward_formula.h).
#ifndef DFMPC_ENVS_SRC_TASK_REWARD_H_
#define DFMPC_ENVS_SRC_TASK_REWARD_H_

#include <mujoco/mujoco.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {

constexpr double kPi = 3.14159265358979323846;

// Id of the MuJoCo object named by `table`'s `key`; table.Fail(key, ...)
// naming the missing object if there is none.
int RequireId(const mjModel* model, mjtObj type, const task::TaskTable& table,
              const std::string& key);

// A scalar of the current state (after Task::Sense).
using Quantity = std::function<double(const mjModel*, const mjData*)>;

// What quantities may name: the model, and the observation features so far.
struct QuantityScope {
  const mjModel* model;
  const std::map<std::string, Quantity>* features;
};

// A feature's reading: one component (`index`) of a sensor, minus the same
// component of another (`minus`) when given; with `log1p = true`,
// sign(x) ln(1 + |x|) of that.
Quantity ParseSensorReading(const task::TaskTable& table, const mjModel* model);

// One of: feature = NAME, sensor = NAME (+ index, minus), action = ACTUATOR,
// norm = [FEATURES] (+ minus = [FEATURES]), success = true (given the
// task's success test), path_distance = {...}. Reads only those keys.
Quantity ParseQuantity(const task::TaskTable& table, const QuantityScope& scope,
                       const Quantity& success);

// The product of `factors`, the [[...factor]] tables (at least one). Throws
// naming the key on bad input.
Quantity RewardProduct(const std::vector<task::TaskTable>& factors, const QuantityScope& scope,
                       const Quantity& success);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_TASK_REWARD_H_
