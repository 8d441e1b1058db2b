// A reward, shaped reward or success test written as a formula in the task
// file (`[reward] expression = "..."`, dfmpc/task/expression.h) over the
// task's named quantities of the simulation state.
#ifndef DFMPC_ENVS_SRC_REWARD_FORMULA_H_
#define DFMPC_ENVS_SRC_REWARD_FORMULA_H_

#include <mujoco/mujoco.h>

#include <mutex>
#include <string>
#include <vector>

#include "dfmpc/task/expression.h"
#include "dfmpc/task/task_spec.h"
#include "random.h"
#include "task_reward.h"

namespace dfmpc::envs {

// What a task's formulas read: the observation features by name, the
// actions as `action.ACTUATOR`, the [[quantity]] tables by name and, in the
// rewards, `success`. Each has a range a formula is probed over at load;
// NaN bounds probe it at the states the task starts from alone.
struct FormulaVariables {
  std::vector<std::string> names;
  std::vector<Quantity> readers;
  std::vector<double> lower, upper;

  void Add(const std::string& name, Quantity reader, double low, double high);
};

class RewardFormula {
 public:
  // `table[key]` holds the formula. Throws std::invalid_argument naming the
  // file and key when it does not parse.
  RewardFormula(const task::TaskTable& table, const std::string& key,
                const FormulaVariables& variables);

  // Thread-safe: a lock guards the formula's storage.
  double operator()(const mjModel* model, const mjData* data) const;
  const std::string& where() const { return expression_.where(); }

  // Throws std::invalid_argument naming the formula, its value and the point
  // where it is not finite: at the state `data` holds, and at `count` points
  // drawn around it (each variable uniform in its range, or at the state's
  // value where it has none).
  void Probe(const mjModel* model, const mjData* data, int count, Rng* rng) const;

 private:
  mutable std::mutex mutex_;  // guards the two below
  mutable task::Expression expression_;
  std::vector<Quantity> readers_;  // empty where the formula does not read it
  std::vector<double> lower_, upper_;
  mutable std::vector<double> values_;  // the point being evaluated
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_REWARD_FORMULA_H_
