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

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/cpu_bf16.h"
#include "dfmpc/worldmodel/device.h"

namespace dfmpc::cli {

planner::PlannerOverrides PlannerFlags::Overrides() const {
  planner::PlannerOverrides overrides;
  for (const auto& [key, text] : given) {
    if (text) overrides.Set(key, planner::ParseOptionValue(planner::FindPlannerOption(key), *text));
  }
  return overrides;
}

planner::ResolvedPlannerOptions PlannerFlags::Resolve(const task::TaskSpec& task,
                                                      int model_levels) const {
  return planner::ResolvePlannerOptions(task, model_levels, Overrides());
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

planner::PlannerOptions RealtimeBenchOptions() {
  planner::PlannerOptions options;
  options.levels = 8;
  options.selection = planner::Selection::kMppi;
  return options;
}

void AddPlannerFlags(CLI::App& cmd, PlannerFlags& flags, bool model_required) {
  CLI::Option* model = cmd.add_option("--model", flags.model,
                                      "world model checkpoint (default: the task's shipped model)");
  if (model_required) model->required();
  for (const planner::OptionDescriptor& option : planner::PlannerOptionTable()) {
    std::optional<std::string>& given = flags.given[option.key];
    // Unset, an option takes the task file's value (`dfmpc info` prints
    // them), else the library's default, shown here.
    const std::string doc = std::string(option.doc) + " (" + option.RangeText() +
                            "; default: " + (option.per_task ? "the task file's, else " : "") +
                            option.DefaultText() + ")";
    std::string names = "--" + option.flag;
    // The older flags (--calls, --renoise, ...); names with '_' were
    // Python's and C++'s only.
    for (const std::string& alias : option.aliases) {
      if (alias.find('_') == std::string::npos) names += ",--" + alias;
    }
    if (option.kind == planner::OptionKind::kFlag) {
      cmd.add_flag_function(
          names + ",!--no-" + option.flag,
          [&given](std::int64_t count) { given = count > 0 ? "true" : "false"; }, doc);
      continue;
    }
    CLI::Option* flag = cmd.add_option(names, given, doc);
    flag->type_name(option.kind == planner::OptionKind::kInteger  ? "INT"
                    : option.kind == planner::OptionKind::kNumber ? "NUMBER"
                                                                  : "TEXT");
    const planner::OptionDescriptor* described = &option;
    flag->check(CLI::Validator(
        [described](std::string& text) {
          try {
            planner::ParseOptionValue(*described, text);
          } catch (const std::invalid_argument& error) {
            return std::string(error.what());
          }
          return std::string();
        },
        "", ""));
  }
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
                                                 const task::TaskSpec& task, bool print_options) {
  std::string model = flags.model;
  if (model.empty()) {
    model = ShippedModelPath(task.name);
    if (!std::filesystem::exists(model)) {
      throw std::invalid_argument("no shipped model for task '" + task.name + "' (" + model +
                                  "); train one with `dfmpc train` and pass --model");
    }
  }
  const planner::PlannerOverrides overrides = flags.Overrides();
  planner::PlannerOptions named;
  overrides.ApplyTo(named);  // the device the model loads onto
  const worldmodel::Checkpoint checkpoint = worldmodel::LoadCheckpoint(
      model, {task.name, 0}, worldmodel::ParseDevice(named.device.empty() ? "cpu" : named.device));
  const planner::ResolvedPlannerOptions resolved =
      planner::ResolvePlannerOptions(task, checkpoint.info.sampling_levels, overrides);
  if (print_options) PrintResolvedOptions(resolved);
  std::fprintf(stderr, "planner: %s\n", DescribePlannerOptions(resolved.options).c_str());
  return std::make_unique<PlannerPolicy>(std::make_unique<planner::Planner>(
      checkpoint, planner::MakeTaskCost(task, checkpoint.info.action_repeat), resolved.options));
}

std::string DescribePlannerOptions(const planner::PlannerOptions& options) {
  std::ostringstream text;
  text << planner::PlanModeName(options.mode) << ", horizon " << options.horizon << ", levels "
       << options.levels << ", re-noise " << options.renoise_levels << ", candidates "
       << options.candidates << ", selection ";
  if (options.selection == planner::Selection::kMppi) {
    text << "mppi at temperature " << options.temperature;
  } else {
    text << "best";
  }
  if (options.guidance_scale > 0.0) text << ", guidance " << options.guidance_scale;
  if (options.outcome_guidance > 0.0) {
    text << ", outcome guidance " << options.outcome_guidance << " toward "
         << options.target_outcome;
  }
  if (options.noise_scale != 1.0 && options.noise_scale_share > 0.0) {
    text << ", noise std " << options.noise_scale;
    if (options.noise_scale_share < 1.0) {
      text << " for " << 100.0 * options.noise_scale_share << "% of candidates";
    }
  }
  if (options.action_window > 1) text << ", action window " << options.action_window;
  if (options.action_gain != 1.0) {
    text << ", action gain " << options.action_gain;
    if (options.action_gain_knee > 0.0) text << " above " << options.action_gain_knee;
  }
  if (!options.value_model.empty()) {
    text << ", value " << options.value_weight << " x " << options.value_model << " at step "
         << (options.value_step > 0 ? std::to_string(options.value_step) : "H / 2");
  }
  if (!options.rollout_model.empty()) text << ", scored by rollouts of " << options.rollout_model;
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

void PrintResolvedOptions(const planner::ResolvedPlannerOptions& resolved) {
  std::printf("planner options (value, source):\n%s",
              planner::FormatResolvedOptions(resolved).c_str());
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
