#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/task/task_spec.h"
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

}  // namespace dfmpc::envs
