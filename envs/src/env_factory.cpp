#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/task/task_spec.h"
#include "model_loader.h"
#include "mujoco_env.h"
#include "task.h"

namespace dfmpc::envs {

std::vector<std::string> TaskNames() { return task::BuiltinTaskNames(); }

std::unique_ptr<Env> MakeEnv(const std::string& task, const EnvOptions& options) {
  return MakeEnv(task::LoadTaskSpec(task), options);
}

std::unique_ptr<Env> MakeEnv(const task::TaskSpec& spec, const EnvOptions& options) {
  return std::make_unique<MujocoEnv>(std::make_shared<const Task>(spec), options);
}

std::vector<std::pair<std::string, double>> FormulaValuesAtStart(const task::TaskSpec& spec,
                                                                 std::uint64_t seed) {
  const Task task(spec);
  const mjModel* model = task.model().get();
  const DataPtr data(mj_makeData(model));
  mj_resetData(model, data.get());
  Rng rng(seed);
  task.Initialize(data.get(), &rng);
  task.Sense(model, data.get());
  return task.FormulaValues(model, data.get());
}

}  // namespace dfmpc::envs
