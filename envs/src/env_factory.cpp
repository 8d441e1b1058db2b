#include <functional>
#include <utility>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "mujoco_env.h"
#include "task.h"

namespace dfmpc::envs {
namespace {

using TaskMaker = std::function<std::unique_ptr<Task>()>;

const std::vector<std::pair<std::string, TaskMaker>>& Registry() {
  static const std::vector<std::pair<std::string, TaskMaker>> registry = {
      {"pendulum_swingup", [] { return MakePendulumSwingup(true); }},
      {"cartpole_swingup", [] { return MakeCartpole(true); }},
      {"cartpole_balance", [] { return MakeCartpole(false); }},
      {"reacher", MakeReacher},
      {"pointmass_maze", MakePointmassMaze},
      {"pendulum_swingup_novel", [] { return MakePendulumSwingup(false); }},
  };
  return registry;
}

}  // namespace

std::vector<std::string> TaskNames() {
  std::vector<std::string> names;
  for (const auto& entry : Registry()) names.push_back(entry.first);
  return names;
}

std::unique_ptr<Env> MakeEnv(const std::string& name, const EnvOptions& options) {
  for (const auto& [task_name, make] : Registry()) {
    if (task_name == name) return std::make_unique<MujocoEnv>(make(), options);
  }
  std::string known;
  for (const std::string& task_name : TaskNames()) known += (known.empty() ? "" : ", ") + task_name;
  throw std::invalid_argument("unknown task '" + name + "' (known: " + known + ")");
}

}  // namespace dfmpc::envs
