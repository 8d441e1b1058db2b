// dfmpc bench soak: an AsyncPlanner driving the pendulum at a fixed rate for
// many control steps without a reset, with faults injected on a schedule
// (a cost that throws or returns NaN, observations the planner refuses);
// prints resident memory over time, misses and the planner's counters, and
// checks that every action was finite and within [-1, 1] and that the
// counters equal the faults injected.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/planner/async_planner.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "faulty_cost.h"
#include "output_path.h"
#include "planner_policy.h"
#include "progress_bar.h"
#include "resident_memory.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

using Clock = std::chrono::steady_clock;

const char kTask[] = "pendulum_swingup";

struct BenchSoakOptions {
  long long steps = 100000;
  double rate_hz = 100;
  long long throw_every = 0;   // cost evaluations between injected throws (0: none)
  long long nan_every = 0;     // cost evaluations between injected NaN costs
  long long refuse_every = 0;  // control steps between refused (NaN) observations
  int reports = 10;            // memory and counter lines over the run
  std::string model;
  std::string csv = "bench_soak.csv";
};

// What the control loop saw.
struct LoopCounts {
  long long refused = 0;     // Step calls that threw for an injected observation
  long long bad_actions = 0; // actions not finite or outside [-1, 1]
  long long overruns = 0;    // periods the loop itself overran
};

void RunBenchSoak(BenchSoakOptions o) {
  if (o.steps < 1 || !(o.rate_hz > 0) || o.reports < 1) {
    throw std::invalid_argument("--steps and --reports must be >= 1, --rate > 0");
  }
  if (o.throw_every < 0 || o.nan_every < 0 || o.refuse_every < 0) {
    throw std::invalid_argument("fault periods must be >= 0 (0: no such fault)");
  }
  if (o.model.empty()) o.model = ShippedModelPath(kTask);
  const worldmodel::Checkpoint checkpoint = worldmodel::LoadCheckpoint(o.model, {kTask, 0});
  auto cost = std::make_unique<FaultyCost>(planner::MakeTaskCost(kTask), o.throw_every,
                                           o.nan_every);
  const FaultyCost& faults = *cost;
  const std::chrono::microseconds period(static_cast<long long>(1e6 / o.rate_hz));
  planner::AsyncPlannerOptions async_options;
  async_options.max_wait = period * 3 / 4;
  async_options.period = period;
  planner::AsyncPlanner controller(
      std::make_unique<planner::Planner>(checkpoint, std::move(cost), RealtimeBenchOptions()),
      async_options);
  envs::EnvOptions env_options;
  env_options.episode_physics_steps = std::numeric_limits<int>::max() / 2;  // one long run
  auto robot = envs::MakeEnv(kTask, env_options);
  Eigen::VectorXd observation = robot->Reset(0);
  controller.Reset(observation);
  const long long thrown_at_reset = faults.thrown(), nans_at_reset = faults.nans();
  std::fprintf(stderr,
               "bench soak: %s, %.0f Hz (max wait %.2f ms), %lld steps; faults: cost throws "
               "every %lld, NaN every %lld evaluations, observation refused every %lld steps\n",
               o.model.c_str(), o.rate_hz, async_options.max_wait.count() / 1e3, o.steps,
               o.throw_every, o.nan_every, o.refuse_every);

  Table table({"step", "seconds", "resident_kib", "misses", "planner_errors", "fallbacks",
               "late", "refused", "bad_actions"});
  LoopCounts loop;
  Eigen::VectorXd action = Eigen::VectorXd::Zero(controller.action_dim());
  const Clock::time_point start = Clock::now();
  Clock::time_point next = start;
  ProgressBar progress("bench soak", o.steps);
  for (long long step = 1; step <= o.steps; ++step) {
    Eigen::VectorXd seen = observation;
    if (o.refuse_every > 0 && step % o.refuse_every == 0) seen[0] = std::nan("");
    try {
      action = controller.Step(seen);
    } catch (const std::invalid_argument&) {
      ++loop.refused;  // the robot keeps the last action for this period
    }
    if (!action.allFinite() || action.cwiseAbs().maxCoeff() > 1.0) ++loop.bad_actions;
    observation = robot->Step(action).observation;
    next += period;
    if (Clock::now() > next) {
      ++loop.overruns;
      next = Clock::now();
    }
    std::this_thread::sleep_until(next);
    progress.Update(step);
    if (step % std::max(1LL, o.steps / o.reports) == 0 || step == o.steps) {
      const planner::AsyncStats s = controller.stats();
      table.AddRow({std::to_string(step),
                    FormatFixed(std::chrono::duration<double>(Clock::now() - start).count(), 1),
                    std::to_string(ResidentKib()), std::to_string(s.misses),
                    std::to_string(s.planner_errors), std::to_string(s.fallbacks),
                    std::to_string(s.late), std::to_string(loop.refused),
                    std::to_string(loop.bad_actions)});
    }
  }
  progress.Finish();
  const planner::AsyncStats stats = controller.stats();
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  // The planning thread may still be in an optimization whose cost call
  // already counted; the destructor waits for it, so compare after it.
  const long long thrown = faults.thrown() - thrown_at_reset, nans = faults.nans() - nans_at_reset;
  std::printf(
      "steps %lld, misses %lld (%.2f%%), loop overruns %lld; injected: %lld cost throws, %lld NaN "
      "costs, %lld refused observations; planner errors %lld, fallbacks %lld\n",
      static_cast<long long>(stats.steps), static_cast<long long>(stats.misses),
      100.0 * stats.misses / std::max<long long>(1, stats.steps), loop.overruns, thrown, nans,
      loop.refused, static_cast<long long>(stats.planner_errors),
      static_cast<long long>(stats.fallbacks));
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
  const long long expected_refused = o.refuse_every > 0 ? o.steps / o.refuse_every : 0;
  // An optimization can still be running: its fault is counted by the cost
  // but not yet by the stats, so the stats may trail by one.
  const bool exact = loop.bad_actions == 0 && loop.refused == expected_refused &&
                     stats.steps == o.steps - loop.refused &&
                     thrown - stats.planner_errors >= 0 && thrown - stats.planner_errors <= 1 &&
                     nans - stats.fallbacks >= 0 && nans - stats.fallbacks <= 1;
  if (!exact) throw std::runtime_error("bench soak: the counters do not match the faults");
  std::printf("stats exact: every action finite and within [-1, 1]\n");
}

}  // namespace

void AddBenchSoakCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchSoakOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "soak", "An AsyncPlanner at a fixed rate for many steps, with injected faults");
  cmd->add_option("--steps", options->steps, "control steps")->capture_default_str();
  cmd->add_option("--rate", options->rate_hz, "control rate in Hz (Step waits 3/4 of a period)")
      ->capture_default_str();
  cmd->add_option("--throw-every", options->throw_every,
                  "cost evaluations between injected throws (0: none)")
      ->capture_default_str();
  cmd->add_option("--nan-every", options->nan_every,
                  "cost evaluations between injected NaN costs (0: none)")
      ->capture_default_str();
  cmd->add_option("--refuse-every", options->refuse_every,
                  "control steps between observations the planner refuses (NaN; 0: none)")
      ->capture_default_str();
  cmd->add_option("--reports", options->reports, "table rows over the run")->capture_default_str();
  cmd->add_option("--model", options->model, "pendulum model (default: shipped)");
  cmd->add_option("--csv", options->csv, "CSV output")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchSoak(*options); });
}

}  // namespace dfmpc::cli
