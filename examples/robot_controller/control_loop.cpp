#include "control_loop.h"

#include <dfmpc/envs/env.h>
#include <dfmpc/planner/model_task.h>
#include <dfmpc/planner/planner.h>
#include <dfmpc/task/task_spec.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>

namespace robot_controller {
namespace {

using Clock = std::chrono::steady_clock;

double Milliseconds(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void AddEpisode(dfmpc::planner::AsyncStats& totals, const dfmpc::planner::AsyncStats& episode) {
  totals.steps += episode.steps;
  totals.misses += episode.misses;
  totals.max_action_age = std::max(totals.max_action_age, episode.max_action_age);
  totals.total_action_age += episode.total_action_age;
  totals.plans += episode.plans;
  totals.total_plan_ms += episode.total_plan_ms;
  totals.max_plan_ms = std::max(totals.max_plan_ms, episode.max_plan_ms);
  totals.planner_errors += episode.planner_errors;
  totals.fallbacks += episode.fallbacks;
  totals.cut_short += episode.cut_short;
  totals.late += episode.late;
  totals.stopped += episode.stopped;
  if (!episode.last_error.empty()) totals.last_error = episode.last_error;
}

}  // namespace

LoopReport RunControlLoop(const LoopOptions& options) {
  if (!(options.rate_hz > 0) || options.steps < 1 || options.threads < 1) {
    throw std::invalid_argument("the rate must be > 0, the steps and threads >= 1");
  }
  // The model carries its task; a given one (a name or a folder) must be
  // the model's.
  const dfmpc::task::TaskSpec task = options.task.empty() ? dfmpc::planner::ModelTask(options.model)
                                                          : dfmpc::task::LoadTaskSpec(options.task);
  // The task's tuned options, with the thread count of this controller.
  auto planner =
      dfmpc::planner::Planner::FromFile(options.model, {{"threads", options.threads}}, task);
  LoopReport report;
  report.task = task.name;

  dfmpc::envs::EnvOptions env_options;
  env_options.action_repeat = planner->action_repeat();
  auto robot = dfmpc::envs::MakeEnv(task, env_options);

  report.period_ms = 1000.0 / options.rate_hz;
  report.max_wait_ms = options.max_wait_ms >= 0 ? options.max_wait_ms : 0.75 * report.period_ms;
  dfmpc::planner::AsyncPlannerOptions async_options;
  async_options.max_wait =
      std::chrono::microseconds(static_cast<int64_t>(report.max_wait_ms * 1e3));
  async_options.period = std::chrono::microseconds(static_cast<int64_t>(report.period_ms * 1e3));
  async_options.deadline_kind = options.deadline_kind;
  dfmpc::planner::AsyncPlanner controller(std::move(planner), async_options);

  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(report.period_ms));
  report.step_latency_ms.reserve(options.steps);
  std::uint64_t seed = options.seed;
  for (int done = 0; done < options.steps; ++seed) {
    // Before the episode's loop starts: the robot at rest, the first plan.
    Eigen::VectorXd observation = robot->Reset(seed);
    controller.Reset(observation);
    double episode_return = 0;
    bool finished = false;
    Clock::time_point next = Clock::now();
    while (done < options.steps && !finished) {
      const Clock::time_point start = Clock::now();
      const Eigen::VectorXd action = controller.Step(observation);
      report.step_latency_ms.push_back(Milliseconds(Clock::now() - start));
      const dfmpc::envs::StepResult result = robot->Step(action);
      observation = result.observation;
      episode_return += result.reward;
      finished = result.truncated || result.terminated;
      ++done;
      next += period;
      if (Clock::now() > next) {
        ++report.overruns;
        next = Clock::now();  // start the next period now rather than bunching steps
      }
      std::this_thread::sleep_until(next);
    }
    AddEpisode(report.totals, controller.stats());
    if (finished) {
      report.returns.push_back(episode_return);
      std::printf("episode %zu (seed %llu): return %.1f\n", report.returns.size(),
                  static_cast<unsigned long long>(seed), episode_return);
    } else {
      report.unfinished_return = episode_return;
      report.unfinished_steps = robot->step_count();
    }
  }
  return report;
}

}  // namespace robot_controller
