// dfmpc bench deadline: how far Planner::Optimize(deadline) returns past its
// deadline, per mode (and block cache setting), competing load, deadline
// and number of observations queued before the call, with the shipped
// pendulum model (RealtimeBenchOptions); the planner.h contract measured. The bench thread runs
// pinned to one CPU (cpu_load.h). The worst step's overrun is set beside the
// time its thread waited for its CPU in that step, on the guest's run queue
// and in the hypervisor's steal (cpu_stalls.h).
#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commands.h"
#include "cpu_load.h"
#include "cpu_stalls.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "output_path.h"
#include "planner_policy.h"
#include "progress_bar.h"
#include "statistics.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

using Clock = std::chrono::steady_clock;

const char kTask[] = "pendulum_swingup";

struct BenchDeadlineOptions {
  std::vector<std::string> modes = {"warm", "replan"};
  std::vector<std::string> block_cache;  // "F/R": warm rows with the block cache
  std::vector<double> deadlines_ms = {1, 2, 5, 10, 20};
  // Observations queued before each Optimize; 0 draws 1..31 per step.
  std::vector<int> queued = {1, 31, 0};
  std::vector<std::string> loads = {"none"};
  // Thread scheduling per row: "normal", or "fifo" (SCHED_FIFO, each
  // optimization starting at the previous one's deadline, as a control
  // loop at a fixed rate).
  std::vector<std::string> scheduling = {"normal"};
  int steps = 200;
  int threads = 1;
  std::uint64_t seed = 0;
  std::string model;
  std::string csv = "bench_deadline.csv";
};

struct Row {
  std::vector<double> overrun_ms;  // return time minus deadline (negative: early)
  std::vector<double> needed_ms;   // of the deferred steps
  StallCounters worst_step_stalls;  // in the step of the largest overrun
  int cut_short = 0, stopped = 0, planned = 0, postponed = 0;
};

// `steps` optimizations, each after `queued` observations (or a draw).
Row MeasureRow(planner::Planner& planner, envs::Env& env, double deadline_ms, int queued,
               bool paced, const BenchDeadlineOptions& o, std::mt19937& rng, int cpu,
               ProgressBar& progress, long long& done) {
  std::uniform_int_distribution<int> draw(1, planner.options().horizon - 1);
  Eigen::VectorXd observation = env.Reset(0);
  planner.Reset(observation);
  Row row;
  const auto budget = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(deadline_ms));
  Clock::time_point previous_deadline = Clock::now();
  double worst_overrun_ms = 0.0;
  for (int s = 0; s < o.steps; ++s) {
    if (paced) std::this_thread::sleep_until(previous_deadline);
    const int count = queued > 0 ? queued : draw(rng);
    for (int i = 0; i < count; ++i) {
      observation = env.Step(planner.Action()).observation;
      planner.Observe(observation);
    }
    const StallCounters before = ReadStallCounters(cpu);
    const Clock::time_point deadline = Clock::now() + budget;
    previous_deadline = deadline;
    row.planned += planner.Optimize(deadline) ? 1 : 0;
    const double overrun_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - deadline).count();
    if (row.overrun_ms.empty() || overrun_ms > worst_overrun_ms) {
      row.worst_step_stalls = ReadStallCounters(cpu) - before;
      worst_overrun_ms = overrun_ms;
    }
    row.overrun_ms.push_back(overrun_ms);
    row.cut_short += planner.last_step().cut_short ? 1 : 0;
    row.stopped += planner.last_step().stopped ? 1 : 0;
    row.postponed += planner.last_step().refresh_postponed ? 1 : 0;
    if (planner.last_step().deferred) row.needed_ms.push_back(planner.last_step().needed_ms);
    progress.Update(++done);
  }
  return row;
}

// A table row: the row's labels, then its overrun percentiles and shares.
void AddResultRow(Table& table, std::vector<std::string> cells, const Row& row) {
  const double n = static_cast<double>(row.overrun_ms.size());
  for (double p : {50.0, 99.0, 99.9, 100.0}) {
    cells.push_back(FormatFixed(Percentile(row.overrun_ms, p), 2));
  }
  for (int count : {row.cut_short, row.stopped, row.postponed, row.planned}) {
    cells.push_back(FormatFixed(count / n, 3));
  }
  cells.push_back(row.needed_ms.empty() ? "-" : FormatFixed(Percentile(row.needed_ms, 50), 2));
  cells.push_back(FormatFixed(row.worst_step_stalls.run_queue_wait_ms, 2));
  cells.push_back(FormatFixed(row.worst_step_stalls.steal_ms, 0));
  table.AddRow(cells);
}

void RunBenchDeadline(BenchDeadlineOptions o) {
  if (o.steps < 1 || o.threads < 1) {
    throw std::invalid_argument("--steps and --threads must be >= 1");
  }
  for (double d : o.deadlines_ms) {
    if (!(d >= 0.0)) throw std::invalid_argument("--deadlines must be >= 0 ms");
  }
  std::vector<LoadKind> loads;
  for (const std::string& load : o.loads) loads.push_back(ParseLoadKind(load));
  if (o.model.empty()) o.model = ShippedModelPath(kTask);
  at::set_num_threads(o.threads);
  const BenchCpus cpus = PinBenchThread(o.scheduling);
  const int bench_cpu = cpus.bench, other_cpu = cpus.other;
  const worldmodel::Checkpoint checkpoint = worldmodel::LoadCheckpoint(o.model, {kTask, 0});
  envs::EnvOptions env_options;
  env_options.episode_physics_steps = 1 << 30;  // no episode end inside a row
  auto env = envs::MakeEnv(kTask, env_options);
  std::fprintf(stderr, "bench deadline: %s, %d thread(s) on CPU %d, %d optimizations per row\n",
               o.model.c_str(), o.threads, bench_cpu, o.steps);
  Table table({"mode", "load", "scheduling", "deadline_ms", "queued", "overrun_p50_ms",
               "overrun_p99_ms", "overrun_p999_ms", "overrun_max_ms", "cut_short", "stopped",
               "refresh_postponed", "planned", "deferred_needed_p50_ms", "max_step_queue_wait_ms",
               "max_step_steal_ms"});
  // Each mode, then warm with each block cache.
  std::vector<std::pair<std::string, planner::PlannerOptions>> configurations;
  for (const std::string& mode : o.modes) {
    planner::PlannerOptions options = RealtimeBenchOptions();
    options.mode = planner::ParsePlanMode(mode);
    configurations.emplace_back(mode, options);
  }
  for (const std::string& setting : o.block_cache) {
    const BlockCacheSetting block = ParseBlockCache(setting);
    planner::PlannerOptions options = RealtimeBenchOptions();
    options.mode = planner::PlanMode::kWarm;
    options.front_tokens = block.front_tokens;
    options.refresh_every = block.refresh_every;
    configurations.emplace_back("warm block " + setting, options);
  }
  const long long total =
      static_cast<long long>(configurations.size() * loads.size() * o.scheduling.size() *
                             o.deadlines_ms.size() * o.queued.size()) *
      o.steps;
  ProgressBar progress("bench deadline", total);
  long long done = 0;
  std::mt19937 rng(static_cast<std::mt19937::result_type>(o.seed));
  for (auto& [mode, options] : configurations) {
    options.seed = o.seed;
    planner::Planner planner(checkpoint, planner::MakeTaskCost(kTask), options);
    for (LoadKind load : loads) {
      const CpuLoad competing(load, bench_cpu, other_cpu);
      for (const std::string& scheduling : o.scheduling) {
        const bool fifo = scheduling == "fifo";
        if (fifo) MakeCallingThreadRealtime(kBenchRealtimePriority);
        for (double deadline_ms : o.deadlines_ms) {
          for (int queued : o.queued) {
            const Row row = MeasureRow(planner, *env, deadline_ms, queued, fifo, o, rng, bench_cpu,
                                       progress, done);
            AddResultRow(table, {mode, LoadKindName(load), scheduling, FormatFixed(deadline_ms, 1),
                                 queued > 0 ? std::to_string(queued) : "1-31"},
                         row);
          }
        }
        if (fifo) MakeCallingThreadNormal();
      }
    }
  }
  progress.Finish();
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

}  // namespace

void AddBenchDeadlineCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchDeadlineOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "deadline", "How far Planner::Optimize(deadline) returns past its deadline");
  cmd->add_option("--modes", options->modes, "plan modes")
      ->capture_default_str()
      ->check(CLI::IsMember({"warm", "replan"}));
  cmd->add_option("--block-cache", options->block_cache,
                  "also warm rows with the block cache, each F/R: F front tokens, the whole plan "
                  "every R steps (e.g. 16/4)");
  cmd->add_option("--deadlines", options->deadlines_ms, "deadlines in ms after the call starts")
      ->capture_default_str();
  cmd->add_option("--queued", options->queued,
                  "observations queued before each call (0: drawn from 1..H-1 every call)")
      ->capture_default_str()
      ->check(CLI::Range(0, 31));
  AddLoadOptions(*cmd, options->loads, options->scheduling,
                 "each optimization starting at the previous one's deadline");
  cmd->add_option("--steps", options->steps, "optimizations per row")->capture_default_str();
  cmd->add_option("--threads", options->threads, "LibTorch intra-op threads")
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "planner seed and draws of the queue length")
      ->capture_default_str();
  cmd->add_option("--model", options->model, "pendulum model (default: shipped)");
  cmd->add_option("--csv", options->csv, "CSV output")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchDeadline(*options); });
}

}  // namespace dfmpc::cli
