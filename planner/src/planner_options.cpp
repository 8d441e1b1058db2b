#include <algorithm>
#include <cmath>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dfmpc/planner/planner.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {
namespace {

void Require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("planner: " + message);
}

}  // namespace

PlanMode ParsePlanMode(const std::string& name) {
  if (name == "warm") return PlanMode::kWarm;
  if (name == "replan") return PlanMode::kReplan;
  throw std::invalid_argument("unknown planner mode '" + name + "' (expected warm or replan)");
}

std::string PlanModeName(PlanMode mode) { return mode == PlanMode::kWarm ? "warm" : "replan"; }

Selection ParseSelection(const std::string& name) {
  if (name == "best") return Selection::kBest;
  if (name == "mppi") return Selection::kMppi;
  throw std::invalid_argument("unknown selection '" + name + "' (expected best or mppi)");
}

std::string SelectionName(Selection selection) {
  return selection == Selection::kBest ? "best" : "mppi";
}

DeadlineKind ParseDeadlineKind(const std::string& name) {
  if (name == "hard") return DeadlineKind::kHard;
  if (name == "start-only") return DeadlineKind::kStartOnly;
  throw std::invalid_argument("unknown deadline kind '" + name + "' (expected hard or start-only)");
}

std::string DeadlineKindName(DeadlineKind kind) {
  return kind == DeadlineKind::kHard ? "hard" : "start-only";
}

PlannerOptions TunedPlannerOptions(const std::string& task) {
  return TunedPlannerOptions(task::LoadTaskSpec(task));
}

PlannerOptions TunedPlannerOptions(const task::TaskSpec& task) {
  return ResolvePlannerOptions(task).options;
}

ResolvedPlannerOptions ResolvePlannerOptions(const task::TaskSpec& task, int model_levels,
                                             const PlannerOverrides& caller) {
  ResolvedPlannerOptions resolved;
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    resolved.sources[option.key] = OptionSource::kDefault;
  }
  const auto apply = [&](const PlannerOverrides& overrides, OptionSource source) {
    overrides.ApplyTo(resolved.options);
    for (const auto& entry : overrides.values()) resolved.sources[entry.first] = source;
  };
  const PlannerOverrides tuned = TaskFileOverrides(task);
  apply(tuned, OptionSource::kTaskFile);
  try {
    resolved.options.Validate();
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(task.file + ": [planner]: " + error.what());
  }
  if (model_levels > 0 && !caller.Has("levels")) {
    const PlannerOptions before = resolved.options;
    resolved.options = AtLevels(resolved.options, model_levels);
    for (const OptionDescriptor& option : PlannerOptionTable()) {
      if (option.get(before).value() != option.get(resolved.options).value()) {
        resolved.sources[option.key] = OptionSource::kModel;
      }
    }
  }
  apply(caller, OptionSource::kCaller);
  resolved.options.Validate();
  return resolved;
}

const char* OptionSourceName(OptionSource source) {
  switch (source) {
    case OptionSource::kDefault:
      return "library default";
    case OptionSource::kTaskFile:
      return "task file";
    case OptionSource::kModel:
      return "model (distilled levels)";
    case OptionSource::kCaller:
      return "caller";
  }
  return "";
}

std::string FormatResolvedOptions(const ResolvedPlannerOptions& resolved) {
  std::size_t key_width = 0, value_width = 0;
  std::vector<std::pair<std::string, std::string>> rows;
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    rows.emplace_back(option.key, option.get(resolved.options).ToString());
    key_width = std::max(key_width, rows.back().first.size());
    value_width = std::max(value_width, rows.back().second.size());
  }
  std::string text;
  for (const auto& [key, value] : rows) {
    text += "  " + key + std::string(key_width - key.size(), ' ') + " = " + value +
            std::string(value_width - value.size(), ' ') + "  (" +
            OptionSourceName(resolved.sources.at(key)) + ")\n";
  }
  return text;
}

PlannerOptions AtLevels(PlannerOptions options, int levels) {
  Require(levels >= 1, "levels must be >= 1, got " + std::to_string(levels));
  const double ratio = static_cast<double>(levels) / options.levels;
  const int renoise = static_cast<int>(std::lround(options.renoise_levels * ratio));
  options.renoise_levels = options.renoise_levels > 0 ? std::max(1, renoise) : 0;
  options.uncertainty *= ratio;  // 0 (K / H) stays 0
  options.levels = levels;
  return options;
}

void PlannerOptions::Validate() const {
  for (const OptionDescriptor& option : PlannerOptionTable()) {
    ConvertOptionValue(option, option.get(*this));
  }
  Require(action_window <= horizon, "action window must be in 1..H = " + std::to_string(horizon) +
                                        " (1: the first action alone), got " +
                                        std::to_string(action_window));
  Require(value_step <= horizon, "value step must be in 0..H = " + std::to_string(horizon) +
                                     " (0: the middle of the plan), got " +
                                     std::to_string(value_step));
  Require(device.empty() || std::regex_match(device, std::regex("cpu|cuda(:[0-9]+)?")),
          "unknown device '" + device + "' (expected cpu, cuda or cuda:N)");
}

bool PlannerOptions::BlockCacheOn() const {
  return mode == PlanMode::kWarm && front_tokens > 0 && front_tokens < horizon && refresh_every > 1;
}

}  // namespace dfmpc::planner
