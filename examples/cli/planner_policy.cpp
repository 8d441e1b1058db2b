#include "planner_policy.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <utility>

#include "device_flag.h"

namespace dfmpc::cli {

planner::PlannerOptions PlannerFlags::Resolve(const task::TaskSpec& task) const {
  planner::PlannerOptions resolved = options;
  const planner::PlannerOptions tuned = planner::TunedPlannerOptions(task);
  resolved.horizon = horizon.value_or(tuned.horizon);
  resolved.renoise_levels = renoise_levels.value_or(tuned.renoise_levels);
  resolved.mode = planner::ParsePlanMode(mode);
  resolved.selection = planner::ParseSelection(selection);
  return resolved;
}

std::string ShippedModelPath(const std::string& task) {
  return std::string(DFMPC_SHIPPED_MODELS_DIR) + "/" + task + ".pt";
}

void AddPlannerFlags(CLI::App& cmd, PlannerFlags& flags, bool model_required) {
  planner::PlannerOptions& o = flags.options;
  CLI::Option* model = cmd.add_option("--model", flags.model,
                                      "world model checkpoint (default: the task's shipped model)");
  if (model_required) model->required();
  cmd.add_option("--mode", flags.mode, "warm (plan cache reused) or replan (from noise)")
      ->check(CLI::IsMember({"warm", "replan"}))
      ->capture_default_str();
  cmd.add_option("--horizon", flags.horizon,
                 "plan tokens H (default: the task's tuned value: 16 for pendulum_swingup_novel, "
                 "32 otherwise)");
  cmd.add_option("--levels", o.num_levels, "sampling levels K")->capture_default_str();
  cmd.add_option("--uncertainty", o.uncertainty, "pyramid u (0: K / H)")->capture_default_str();
  cmd.add_option("--calls", o.calls_per_step, "calls per control step r (warm)")
      ->capture_default_str();
  cmd.add_option("--renoise", flags.renoise_levels,
                 "extra levels a warm step re-noises the plan by (default: the task's tuned "
                 "value: 8 for the cart-pole tasks, 4 otherwise)");
  cmd.add_option("--candidates", o.candidates, "candidate plans N")->capture_default_str();
  cmd.add_option("--selection", flags.selection, "best or mppi")
      ->check(CLI::IsMember({"best", "mppi"}))
      ->capture_default_str();
  cmd.add_option("--temperature", o.temperature, "MPPI temperature")->capture_default_str();
  cmd.add_option("--guidance", o.guidance_scale, "cost guidance scale (0: off)")
      ->capture_default_str();
  cmd.add_option("--eta", o.eta, "DDIM stochasticity")->capture_default_str();
  cmd.add_option("--context", o.context_length, "real tokens the plan attends to (0: window - H)")
      ->capture_default_str();
  cmd.add_option("--sinks", o.num_sinks, "pinned first context tokens")->capture_default_str();
  cmd.add_option("--planner-seed", o.seed, "planner noise seed")->capture_default_str();
  AddDeviceFlag(cmd, o.device);
  cmd.add_flag("--no-cuda-graphs{false}", o.cuda_graphs,
               "on a GPU, run every model call eagerly instead of replaying CUDA graphs");
}

PlannerPolicy::PlannerPolicy(std::unique_ptr<planner::Planner> planner)
    : planner_(std::move(planner)) {}

namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

void PlannerPolicy::Reset(const Eigen::VectorXd& observation) {
  const auto start = std::chrono::steady_clock::now();
  planner_->Reset(observation);
  reset_ms_.push_back(MillisecondsSince(start));
}

Eigen::VectorXd PlannerPolicy::Act(const Eigen::VectorXd& observation) {
  const auto start = std::chrono::steady_clock::now();
  const bool first = planner_->steps() == 0;  // reads the plan Reset made
  Eigen::VectorXd action = planner_->Act(observation);
  const double latency = MillisecondsSince(start);
  const planner::StepStats& stats = planner_->last_step();
  records_.push_back(first ? StepRecord{latency, 0, 0}
                           : StepRecord{latency, stats.token_forwards, stats.calls});
  return action;
}

std::unique_ptr<PlannerPolicy> MakePlannerPolicy(const PlannerFlags& flags,
                                                 const task::TaskSpec& task) {
  std::string model = flags.model;
  if (model.empty()) {
    model = ShippedModelPath(task.name);
    if (!std::filesystem::exists(model)) {
      throw std::invalid_argument("no shipped model for task '" + task.name + "' (" + model +
                                  "); train one with `dfmpc train` and pass --model");
    }
  }
  return std::make_unique<PlannerPolicy>(
      planner::Planner::FromFile(model, flags.Resolve(task), task));
}

int ModelActionRepeat(const TimedPolicy& policy, int requested) {
  const int trained = policy.action_repeat();
  if (requested != 0 && requested != trained) {
    throw std::invalid_argument("--action-repeat " + std::to_string(requested) +
                                " does not match the model, which was trained on " +
                                std::to_string(trained) + " physics step(s) per control step");
  }
  return trained;
}

}  // namespace dfmpc::cli
