// The quantities a task file's rewards and success test read from the
// simulation, and the reward: a product of factors `offset + weight * term`,
// where the term is a quantity or dm_control's tolerance of one.
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
// component of another (`minus`) when given.
Quantity ParseSensorReading(const task::TaskTable& table, const mjModel* model);

// One of: feature = NAME, sensor = NAME (+ index, minus), action = ACTUATOR,
// norm = [FEATURES] (+ minus = [FEATURES]), success = true (given the
// task's success test), path_distance = {...}. Reads only those keys.
Quantity ParseQuantity(const task::TaskTable& table, const QuantityScope& scope,
                       const Quantity& success);

class RewardProduct {
 public:
  RewardProduct() = default;
  // `factors`: the [[...factor]] tables. Throws naming the key on bad input.
  RewardProduct(const std::vector<task::TaskTable>& factors, const QuantityScope& scope,
                const Quantity& success);
  bool empty() const { return factors_.empty(); }
  double operator()(const mjModel* model, const mjData* data) const;

 private:
  std::vector<Quantity> factors_;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_TASK_REWARD_H_
