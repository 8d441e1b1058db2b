// `dfmpc task stamp`: give a model file the files of a task, so that a task
// folder tuned after training (its [planner] table, its cost) reaches the
// model without retraining it.
#ifndef DFMPC_EXAMPLES_CLI_TASK_STAMP_H_
#define DFMPC_EXAMPLES_CLI_TASK_STAMP_H_

#include <string>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::cli {

// Writes `model_path`'s model to `out_path` (atomically; it may be the same
// file) carrying `task`'s task.toml and MJCF, with the weights, normalizer
// and every other field unchanged and the stamp appended to its notes.
// Takes state and video world models, value models, MLP dynamics models and
// ensembles. Throws std::invalid_argument when the task's name is not the
// model's, or its observations or actions differ in number from the model's
// (a video model's observations are latents: only its actions are compared),
// and std::runtime_error for a file that does not load or a frame tokenizer.
// Returns the model file's format (worldmodel/model_file.h).
std::string StampTask(const std::string& model_path, const task::TaskSpec& task,
                      const std::string& out_path);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TASK_STAMP_H_
