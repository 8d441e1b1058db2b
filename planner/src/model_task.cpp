#include "dfmpc/planner/model_task.h"

#include <stdexcept>

#include "dfmpc/worldmodel/checkpoint.h"

namespace dfmpc::planner {

task::TaskSpec ModelTask(const std::string& model_path) {
  return ModelTask(worldmodel::LoadCheckpoint(model_path).info, model_path);
}

task::TaskSpec ModelTask(const worldmodel::ModelInfo& info, const std::string& model_path) {
  return CarriedTask(info.task, info.task_file, info.task_mjcf, model_path);
}

task::TaskSpec CarriedTask(const std::string& name, const std::string& task_file,
                           const std::string& task_mjcf, const std::string& origin) {
  if (task_file.empty()) {
    try {
      return task::LoadTaskSpec(name);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(origin + " carries no task files and its task '" + name +
                                  "' is not built in: give its task folder (" + error.what() + ")");
    }
  }
  task::TaskSpec spec = task::ParseTaskSpec(task_file, task_mjcf, origin + " (its task.toml)");
  if (spec.name != name) {
    throw std::invalid_argument(origin + ": the task it carries is named '" + spec.name +
                                "', not the model's '" + name + "'");
  }
  return spec;
}

}  // namespace dfmpc::planner
