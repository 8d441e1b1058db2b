// robot_controller: drives a MuJoCo "robot" at a fixed control rate with the
// AsyncPlanner and reports the return, deadline misses and the latency the
// control thread saw.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <numeric>
#include <vector>

#include "control_loop.h"

namespace {

// The q-quantile of `values` (nearest rank); 0 for none.
double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const size_t rank = static_cast<size_t>(q * (values.size() - 1) + 0.5);
  std::nth_element(values.begin(), values.begin() + rank, values.end());
  return values[rank];
}

void PrintReport(const robot_controller::LoopReport& r) {
  const dfmpc::planner::AsyncStats& s = r.totals;
  const double mean_return =
      r.returns.empty() ? 0 : std::accumulate(r.returns.begin(), r.returns.end(), 0.0) /
                                   r.returns.size();
  const double steps = std::max<double>(1, s.steps);
  std::printf("task %s, period %.1f ms, max wait %.1f ms, %lld steps\n", r.task.c_str(),
              r.period_ms, r.max_wait_ms, static_cast<long long>(s.steps));
  std::printf("return: mean %.1f over %zu complete episodes\n", mean_return, r.returns.size());
  if (r.unfinished_steps > 0) {
    std::printf("last episode cut short: return %.1f after %d control steps\n",
                r.unfinished_return, r.unfinished_steps);
  }
  std::printf("Step latency (ms): p50 %.3f  p99 %.3f  max %.3f\n",
              Percentile(r.step_latency_ms, 0.5), Percentile(r.step_latency_ms, 0.99),
              *std::max_element(r.step_latency_ms.begin(), r.step_latency_ms.end()));
  std::printf("deadline misses: %lld (%.2f%%), action age: mean %.3f, max %lld steps\n",
              static_cast<long long>(s.misses), 100.0 * s.misses / steps,
              s.total_action_age / steps, static_cast<long long>(s.max_action_age));
  std::printf("plans: %lld (mean %.2f ms, max %.2f ms), planner errors: %lld, "
              "loop overruns: %lld\n",
              static_cast<long long>(s.plans), s.total_plan_ms / std::max<double>(1, s.plans),
              s.max_plan_ms, static_cast<long long>(s.planner_errors),
              static_cast<long long>(r.overruns));
  std::printf("optimizations cut short by the deadline: %lld, late: %lld, fallbacks: %lld\n",
              static_cast<long long>(s.cut_short), static_cast<long long>(s.late),
              static_cast<long long>(s.fallbacks));
  if (!s.last_error.empty()) std::printf("last planner error: %s\n", s.last_error.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Controls a MuJoCo task at a fixed rate with dfmpc's AsyncPlanner"};
  robot_controller::LoopOptions options;
  app.add_option("--model", options.model, "dfmpc world-model file (e.g. pendulum_swingup.pt)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--task", options.task,
                 "the MuJoCo task that plays the robot: a built-in name or a task folder "
                 "(default: the model's own task)");
  app.add_option("--rate", options.rate_hz, "control rate in Hz")->capture_default_str();
  app.add_option("--max-wait-ms", options.max_wait_ms,
                 "longest wait for the fresh plan (default: 3/4 of the period)");
  app.add_option("--steps", options.steps, "control steps, over consecutive episodes")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the first episode")->capture_default_str();
  app.add_option("--threads", options.threads, "LibTorch threads of the planning thread")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    PrintReport(robot_controller::RunControlLoop(options));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "robot_controller: %s\n", e.what());
    return 1;
  }
  return 0;
}
