// The model-driven policies that `eval` and `control` run by name: the dfmpc
// planner ("dfmpc") and its learned-dynamics peer ("mlp-mppi"), plus the
// peer's command-line options.
#ifndef DFMPC_EXAMPLES_CLI_MODEL_POLICIES_H_
#define DFMPC_EXAMPLES_CLI_MODEL_POLICIES_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dfmpc/task/task_spec.h"
#include "mlp_mppi_policy.h"
#include "planner_policy.h"
#include "timed_policy.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

struct MlpMppiFlags {
  std::string model;  // ensemble file from `dfmpc train-mlp --ensemble E`
  planner::MlpMppiOptions options;
};

// Adds --mlp-model and the --mppi-* options.
void AddMlpMppiFlags(CLI::App& cmd, MlpMppiFlags& flags);

// "dfmpc" and "mlp-mppi".
std::vector<std::string> ModelPolicyNames();

// The task of the model file the flags name for policy `name` (the world
// model's for dfmpc, the ensemble's for mlp-mppi; planner/model_task.h):
// none when they name no file. Throws what loading the file throws.
std::optional<task::TaskSpec> NamedModelTask(const std::string& name, const PlannerFlags& planner,
                                             const MlpMppiFlags& mppi);

// The policy `name` for `task`; throws std::invalid_argument for another name.
// `print_options`: the planner prints every option with its source first.
std::unique_ptr<TimedPolicy> MakeModelPolicy(const std::string& name, const PlannerFlags& planner,
                                             const MlpMppiFlags& mppi, const task::TaskSpec& task,
                                             bool print_options = false);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_MODEL_POLICIES_H_
