#include <algorithm>
#include <cmath>
#include <regex>
#include <stdexcept>
#include <string>

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

PlannerOptions TunedPlannerOptions(const std::string& task) {
  return TunedPlannerOptions(task::LoadTaskSpec(task));
}

PlannerOptions TunedPlannerOptions(const task::TaskSpec& task) {
  PlannerOptions options;
  if (!task.root.Has("planner")) return options;
  const task::TaskTable tuned = task.root.Table("planner");
  if (tuned.Has("mode")) options.mode = ParsePlanMode(tuned.Text("mode"));
  options.horizon = tuned.Integer("horizon", options.horizon);
  options.num_levels = tuned.Integer("levels", options.num_levels);
  options.uncertainty = tuned.Number("uncertainty", options.uncertainty);
  options.calls_per_step = tuned.Integer("calls_per_step", options.calls_per_step);
  options.renoise_levels = tuned.Integer("renoise_levels", options.renoise_levels);
  options.front_tokens = tuned.Integer("front_tokens", options.front_tokens);
  options.refresh_every = tuned.Integer("refresh_every", options.refresh_every);
  options.candidates = tuned.Integer("candidates", options.candidates);
  if (tuned.Has("selection")) options.selection = ParseSelection(tuned.Text("selection"));
  options.temperature = tuned.Number("temperature", options.temperature);
  options.guidance_scale = tuned.Number("guidance_scale", options.guidance_scale);
  options.eta = tuned.Number("eta", options.eta);
  options.action_window = tuned.Integer("action_window", options.action_window);
  options.action_gain = tuned.Number("action_gain", options.action_gain);
  options.action_gain_knee = tuned.Number("action_gain_knee", options.action_gain_knee);
  options.value_weight = tuned.Number("value_weight", options.value_weight);
  options.value_step = tuned.Integer("value_step", options.value_step);
  options.context_length = tuned.Integer("context_length", options.context_length);
  options.num_sinks = tuned.Integer("sinks", options.num_sinks);
  tuned.RejectUnread();
  try {
    options.Validate();
  } catch (const std::invalid_argument& error) {
    tuned.Fail("", error.what());
  }
  return options;
}

PlannerOptions AtLevels(PlannerOptions options, int levels) {
  Require(levels >= 1, "levels must be >= 1, got " + std::to_string(levels));
  const double ratio = static_cast<double>(levels) / options.num_levels;
  const int renoise = static_cast<int>(std::lround(options.renoise_levels * ratio));
  options.renoise_levels = options.renoise_levels > 0 ? std::max(1, renoise) : 0;
  options.uncertainty *= ratio;  // 0 (K / H) stays 0
  options.num_levels = levels;
  return options;
}

void PlannerOptions::Validate() const {
  Require(horizon >= 1, "horizon H must be >= 1, got " + std::to_string(horizon));
  Require(num_levels >= 1, "levels K must be >= 1, got " + std::to_string(num_levels));
  Require(calls_per_step >= 1,
          "calls per step r must be >= 1, got " + std::to_string(calls_per_step));
  Require(renoise_levels >= 0,
          "renoise levels must be >= 0, got " + std::to_string(renoise_levels));
  Require(front_tokens >= 0,
          "front tokens must be >= 0 (0: the whole plan), got " + std::to_string(front_tokens));
  Require(refresh_every >= 1,
          "refresh every must be >= 1 control steps, got " + std::to_string(refresh_every));
  Require(candidates >= 1, "candidates N must be >= 1, got " + std::to_string(candidates));
  Require(std::isfinite(uncertainty) && uncertainty >= 0.0,
          "uncertainty must be finite and >= 0 (0 picks K / H)");
  Require(std::isfinite(temperature) && temperature > 0.0,
          "MPPI temperature must be finite and > 0");
  Require(std::isfinite(guidance_scale) && guidance_scale >= 0.0,
          "guidance scale must be finite and >= 0");
  Require(std::isfinite(eta) && eta >= 0.0, "eta must be finite and >= 0");
  Require(action_window >= 1 && action_window <= horizon,
          "action window must be in 1..H = " + std::to_string(horizon) +
              " (1: the first action alone), got " + std::to_string(action_window));
  Require(std::isfinite(action_gain) && action_gain > 0.0,
          "action gain must be finite and > 0 (1: the planned action itself)");
  Require(std::isfinite(action_gain_knee) && action_gain_knee >= 0.0 && action_gain_knee < 1.0,
          "action gain knee must be in [0, 1) (0: the gain scales the whole action)");
  Require(std::isfinite(value_weight) && value_weight > 0.0, "value weight must be finite and > 0");
  Require(value_step >= 0 && value_step <= horizon,
          "value step must be in 0..H = " + std::to_string(horizon) +
              " (0: the middle of the plan), got " + std::to_string(value_step));
  Require(context_length >= 0, "context length must be >= 0 (0 picks the model's window - H)");
  Require(num_sinks >= 0, "sinks must be >= 0");
  Require(threads >= 0, "threads must be >= 0 (0 leaves LibTorch's setting)");
  Require(device.empty() || std::regex_match(device, std::regex("cpu|cuda(:[0-9]+)?")),
          "unknown device '" + device + "' (expected cpu, cuda or cuda:N)");
}

bool PlannerOptions::BlockCacheOn() const {
  return mode == PlanMode::kWarm && front_tokens > 0 && front_tokens < horizon && refresh_every > 1;
}

}  // namespace dfmpc::planner
