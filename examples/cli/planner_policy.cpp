#include "planner_policy.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "device_flag.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/cpu_bf16.h"

namespace dfmpc::cli {

planner::PlannerOptions PlannerFlags::Resolve(const task::TaskSpec& task, int model_levels) const {
  planner::PlannerOptions tuned = planner::TunedPlannerOptions(task);
  if (model_levels > 0 && !levels) tuned = planner::AtLevels(tuned, model_levels);
  planner::PlannerOptions resolved = options;
  resolved.mode = mode ? planner::ParsePlanMode(*mode) : tuned.mode;
  resolved.selection = selection ? planner::ParseSelection(*selection) : tuned.selection;
  resolved.horizon = horizon.value_or(tuned.horizon);
  resolved.num_levels = levels.value_or(tuned.num_levels);
  resolved.calls_per_step = calls_per_step.value_or(tuned.calls_per_step);
  resolved.renoise_levels = renoise_levels.value_or(tuned.renoise_levels);
  resolved.front_tokens = front_tokens.value_or(tuned.front_tokens);
  resolved.refresh_every = refresh_every.value_or(tuned.refresh_every);
  resolved.candidates = candidates.value_or(tuned.candidates);
  resolved.context_length = context_length.value_or(tuned.context_length);
  resolved.num_sinks = sinks.value_or(tuned.num_sinks);
  resolved.uncertainty = uncertainty.value_or(tuned.uncertainty);
  resolved.temperature = temperature.value_or(tuned.temperature);
  resolved.guidance_scale = guidance_scale.value_or(tuned.guidance_scale);
  resolved.eta = eta.value_or(tuned.eta);
  resolved.action_window = action_window.value_or(tuned.action_window);
  resolved.action_gain = action_gain.value_or(tuned.action_gain);
  resolved.action_gain_knee = action_gain_knee.value_or(tuned.action_gain_knee);
  resolved.value_weight = value_weight.value_or(tuned.value_weight);
  resolved.value_step = value_step.value_or(tuned.value_step);
  return resolved;
}

BlockCacheSetting ParseBlockCache(const std::string& text) {
  BlockCacheSetting setting;
  char slash = 0, extra = 0;
  std::istringstream in(text);
  if (!(in >> setting.front_tokens >> slash >> setting.refresh_every) || slash != '/' ||
      in >> extra || setting.front_tokens < 1 || setting.refresh_every < 1) {
    throw std::invalid_argument(
        "a block cache setting is F/R (front tokens / refresh every R "
        "steps, both >= 1), got '" +
        text + "'");
  }
  return setting;
}

std::string ShippedModelPath(const std::string& task) {
  return std::string(DFMPC_SHIPPED_MODELS_DIR) + "/" + task + ".pt";
}

void AddPlannerFlags(CLI::App& cmd, PlannerFlags& flags, bool model_required) {
  planner::PlannerOptions& o = flags.options;
  CLI::Option* model = cmd.add_option("--model", flags.model,
                                      "world model checkpoint (default: the task's shipped model)");
  if (model_required) model->required();
  // Unset, each takes the task file's [planner] value (`dfmpc task check`
  // prints them), else the library's default, shown here.
  const planner::PlannerOptions defaults;
  const auto task_or = [](const auto& value) {
    std::ostringstream text;
    text << value;
    return " (default: the task file's, else " + text.str() + ")";
  };
  cmd.add_option("--mode", flags.mode,
                 "warm (plan cache reused) or replan (from noise)" + task_or("warm"))
      ->check(CLI::IsMember({"warm", "replan"}));
  cmd.add_option("--horizon", flags.horizon, "plan tokens H" + task_or(defaults.horizon));
  cmd.add_option("--levels", flags.levels, "sampling levels K" + task_or(defaults.num_levels));
  cmd.add_option("--uncertainty", flags.uncertainty,
                 "pyramid u, 0: K / H" + task_or(defaults.uncertainty));
  cmd.add_option("--calls", flags.calls_per_step,
                 "calls per control step r (warm)" + task_or(defaults.calls_per_step));
  cmd.add_option(
      "--renoise", flags.renoise_levels,
      "extra levels a warm step re-noises the plan by" + task_or(defaults.renoise_levels));
  cmd.add_option("--front-tokens", flags.front_tokens,
                 "block cache: plan tokens a warm step runs, the rest wait for a refresh; 0: all "
                 "(exact)" +
                     task_or(defaults.front_tokens));
  cmd.add_option("--refresh-every", flags.refresh_every,
                 "block cache: control steps between runs of the whole plan" +
                     task_or(defaults.refresh_every));
  cmd.add_option("--candidates", flags.candidates,
                 "candidate plans N" + task_or(defaults.candidates));
  cmd.add_option("--selection", flags.selection, "best or mppi" + task_or("best"))
      ->check(CLI::IsMember({"best", "mppi"}));
  cmd.add_option("--temperature", flags.temperature,
                 "MPPI temperature" + task_or(defaults.temperature));
  cmd.add_option("--guidance", flags.guidance_scale,
                 "cost guidance scale, 0: off" + task_or(defaults.guidance_scale));
  cmd.add_option("--eta", flags.eta, "DDIM stochasticity" + task_or(defaults.eta));
  cmd.add_option("--action-window", flags.action_window,
                 "the executed action is the mean of the plan's first W actions; 1: the first "
                 "alone" +
                     task_or(defaults.action_window));
  cmd.add_option("--action-gain", flags.action_gain,
                 "the executed action is G times the window's mean, clamped to [-1, 1]; 1: the "
                 "mean itself" +
                     task_or(defaults.action_gain));
  cmd.add_option("--action-gain-knee", flags.action_gain_knee,
                 "the gain multiplies only the part of |action| above this knee, in [0, 1); 0: "
                 "the whole action" +
                     task_or(defaults.action_gain_knee));
  cmd.add_option("--value-model", o.value_model,
                 "a critic from `dfmpc train-value` whose value joins each plan's cost "
                 "(default: none)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--value-weight", flags.value_weight,
                 "weight of the value, in discounted steps of reward missed after the valued "
                 "step" +
                     task_or(defaults.value_weight));
  cmd.add_option("--value-step", flags.value_step,
                 "the plan step whose observation the critic values, 0: the middle (H / 2)" +
                     task_or(defaults.value_step));
  cmd.add_option(
      "--context", flags.context_length,
      "real tokens the plan attends to, 0: window - H" + task_or(defaults.context_length));
  cmd.add_option("--sinks", flags.sinks,
                 "pinned first context tokens" + task_or(defaults.num_sinks));
  cmd.add_option("--planner-seed", o.seed, "planner noise seed")->capture_default_str();
  AddDeviceFlag(cmd, o.device);
  cmd.add_flag("--no-cuda-graphs{false}", o.cuda_graphs,
               "on a GPU, run every model call eagerly instead of replaying CUDA graphs");
  cmd.add_flag("--cpu-bf16", o.cpu_bf16,
               "on the CPU, multiply the model's linear layers in bfloat16 in calls of more than "
               "64 tokens (approximate; faster only on a CPU with AVX512-BF16)");
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
  // A distilled model plans at its own K (read here, loaded again below).
  const int model_levels = worldmodel::LoadCheckpoint(model, {task.name, 0}).info.sampling_levels;
  const planner::PlannerOptions options = flags.Resolve(task, model_levels);
  std::fprintf(stderr, "planner: %s\n", DescribePlannerOptions(options).c_str());
  return std::make_unique<PlannerPolicy>(planner::Planner::FromFile(model, options, task));
}

std::string DescribePlannerOptions(const planner::PlannerOptions& options) {
  std::ostringstream text;
  text << planner::PlanModeName(options.mode) << ", horizon " << options.horizon << ", levels "
       << options.num_levels << ", re-noise " << options.renoise_levels << ", candidates "
       << options.candidates << ", selection ";
  if (options.selection == planner::Selection::kMppi) {
    text << "mppi at temperature " << options.temperature;
  } else {
    text << "best";
  }
  if (options.guidance_scale > 0.0) text << ", guidance " << options.guidance_scale;
  if (options.action_window > 1) text << ", action window " << options.action_window;
  if (options.action_gain != 1.0) {
    text << ", action gain " << options.action_gain;
    if (options.action_gain_knee > 0.0) text << " above " << options.action_gain_knee;
  }
  if (!options.value_model.empty()) {
    text << ", value " << options.value_weight << " x " << options.value_model << " at step "
         << (options.value_step > 0 ? std::to_string(options.value_step) : "H / 2");
  }
  if (options.BlockCacheOn()) {
    text << ", block cache: front " << options.front_tokens << " tokens, refresh every "
         << options.refresh_every;
  }
  if (options.cpu_bf16) {
    text << ", bfloat16 products";
    if (!worldmodel::CpuHasBf16DotProduct()) {
      text << " (this CPU lacks AVX512-BF16: slower than float here)";
    }
  }
  return text.str();
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
