#include <cmath>
#include <regex>
#include <stdexcept>
#include <string>

#include "dfmpc/planner/planner.h"

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
  PlannerOptions options;
  if (task == "cartpole_swingup" || task == "cartpole_balance") options.renoise_levels = 8;
  if (task == "pendulum_swingup_novel") options.horizon = 16;
  return options;
}

void PlannerOptions::Validate() const {
  Require(horizon >= 1, "horizon H must be >= 1, got " + std::to_string(horizon));
  Require(num_levels >= 1, "levels K must be >= 1, got " + std::to_string(num_levels));
  Require(calls_per_step >= 1,
          "calls per step r must be >= 1, got " + std::to_string(calls_per_step));
  Require(renoise_levels >= 0,
          "renoise levels must be >= 0, got " + std::to_string(renoise_levels));
  Require(candidates >= 1, "candidates N must be >= 1, got " + std::to_string(candidates));
  Require(std::isfinite(uncertainty) && uncertainty >= 0.0,
          "uncertainty must be finite and >= 0 (0 picks K / H)");
  Require(std::isfinite(temperature) && temperature > 0.0,
          "MPPI temperature must be finite and > 0");
  Require(std::isfinite(guidance_scale) && guidance_scale >= 0.0,
          "guidance scale must be finite and >= 0");
  Require(std::isfinite(eta) && eta >= 0.0, "eta must be finite and >= 0");
  Require(context_length >= 0, "context length must be >= 0 (0 picks the model's window - H)");
  Require(num_sinks >= 0, "sinks must be >= 0");
  Require(threads >= 0, "threads must be >= 0 (0 leaves LibTorch's setting)");
  Require(device.empty() || std::regex_match(device, std::regex("cpu|cuda(:[0-9]+)?")),
          "unknown device '" + device + "' (expected cpu, cuda or cuda:N)");
}

}  // namespace dfmpc::planner
