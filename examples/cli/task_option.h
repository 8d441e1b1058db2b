// The --task option's check: a built-in task's name or a task folder.
#ifndef DFMPC_EXAMPLES_CLI_TASK_OPTION_H_
#define DFMPC_EXAMPLES_CLI_TASK_OPTION_H_

#include <CLI/CLI.hpp>

namespace dfmpc::cli {

// Accepts envs::TaskNames() and any folder holding a task.toml; the message
// lists the built-in names otherwise.
CLI::Validator TaskNameOrFolder();

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TASK_OPTION_H_
