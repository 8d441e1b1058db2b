#include "model_policies.h"

#include <CLI/CLI.hpp>
#include <stdexcept>

#include "dfmpc/planner/model_task.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"

namespace dfmpc::cli {

void AddMlpMppiFlags(CLI::App& cmd, MlpMppiFlags& flags) {
  planner::MlpMppiOptions& o = flags.options;
  cmd.add_option("--mlp-model", flags.model,
                 "MLP ensemble for --policy mlp-mppi (`dfmpc train-mlp --ensemble E`)");
  cmd.add_option("--mppi-horizon", o.horizon, "mlp-mppi: control steps per rollout")
      ->capture_default_str();
  cmd.add_option("--mppi-samples", o.num_samples, "mlp-mppi: candidates per control step")
      ->capture_default_str();
  cmd.add_option("--mppi-noise", o.noise_std, "mlp-mppi: std of the knot perturbation")
      ->capture_default_str();
  cmd.add_option("--mppi-knots", o.num_knots, "mlp-mppi: spline knots over the horizon")
      ->capture_default_str();
  cmd.add_option("--mppi-temperature", o.temperature,
                 "mlp-mppi: 0 keeps the best candidate, > 0 weights them MPPI-style")
      ->capture_default_str();
  cmd.add_option("--mppi-disagreement", o.disagreement,
                 "mlp-mppi: weight of the members' disagreement along each rollout in its cost")
      ->capture_default_str();
  cmd.add_option("--mppi-seed", o.seed, "mlp-mppi: sampling seed")->capture_default_str();
}

std::vector<std::string> ModelPolicyNames() { return {"dfmpc", "mlp-mppi"}; }

std::optional<task::TaskSpec> NamedModelTask(const std::string& name, const PlannerFlags& planner,
                                             const MlpMppiFlags& mppi) {
  if (name == "dfmpc" && !planner.model.empty()) return planner::ModelTask(planner.model);
  if (name == "mlp-mppi" && !mppi.model.empty()) {
    const worldmodel::MlpModelInfo info = worldmodel::LoadMlpEnsemble(mppi.model).info.model;
    return planner::CarriedTask(info.task, info.task_file, info.task_mjcf, mppi.model);
  }
  return std::nullopt;
}

std::unique_ptr<TimedPolicy> MakeModelPolicy(const std::string& name, const PlannerFlags& planner,
                                             const MlpMppiFlags& mppi, const task::TaskSpec& task,
                                             bool print_options) {
  if (name == "dfmpc") return MakePlannerPolicy(planner, task, print_options);
  if (name == "mlp-mppi") {
    // The critic flags are the planner's: the peer values its rollouts the
    // same way (value_step 0: the middle of its horizon).
    planner::MlpMppiOptions options = mppi.options;
    const planner::PlannerOptions tuned = planner.Resolve(task).options;
    options.value_model = tuned.value_model;
    options.value_weight = tuned.value_weight;
    options.value_step = tuned.value_step;
    return MakeMlpMppiPolicy(mppi.model, task, options);
  }
  throw std::invalid_argument("unknown model policy '" + name + "' (dfmpc or mlp-mppi)");
}

}  // namespace dfmpc::cli
