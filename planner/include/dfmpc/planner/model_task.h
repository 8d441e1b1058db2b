// The task a model file was trained on. Models carry their task's files
// (task.toml and the MJCF, inside the checksummed file), so planning with a
// model needs no task folder and no name; files written before models carried
// them name a built-in task, which is found by name.
#ifndef DFMPC_PLANNER_MODEL_TASK_H_
#define DFMPC_PLANNER_MODEL_TASK_H_

#include <string>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::worldmodel {
struct ModelInfo;
}  // namespace dfmpc::worldmodel

namespace dfmpc::planner {

// Throws std::runtime_error for a file that does not load, and
// std::invalid_argument for a carried task that does not parse or whose name
// differs from the model's, or an old model of a task that is not built in.
task::TaskSpec ModelTask(const std::string& model_path);
task::TaskSpec ModelTask(const worldmodel::ModelInfo& info, const std::string& model_path);
// The same from a model file's task fields (any model kind, e.g. the MLP
// peer's); `origin` names the file in messages.
task::TaskSpec CarriedTask(const std::string& name, const std::string& task_file,
                           const std::string& task_mjcf, const std::string& origin);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_MODEL_TASK_H_
