// dfmpc bench cost: what a task's cost takes at the planner's step, term by
// term (the built-in tensor terms beside the task file's formulas), with
// and without the gradient that cost guidance takes, each as a share of the
// shipped model's warm step, in one run.
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/types.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "output_path.h"
#include "planner_policy.h"
#include "progress_bar.h"
#include "statistics.h"
#include "table.h"
#include "task_option.h"

namespace dfmpc::cli {
namespace {

struct BenchCostOptions {
  std::string task = "pendulum_swingup";
  std::string model;  // default: the task's shipped model
  int repeats = 2000;
  int steps = 300;
  int threads = 1;
  std::string csv = "bench_cost.csv";
};

using Clock = std::chrono::steady_clock;

double Microseconds(Clock::time_point since) {
  return std::chrono::duration<double, std::micro>(Clock::now() - since).count();
}

// Warm-step latencies (ms) of the planner in closed loop, after 20 steps.
std::vector<double> WarmSteps(planner::Planner& planner, envs::Env& env, int steps,
                              ProgressBar& progress, long long& done) {
  constexpr int kSettle = 20;
  Eigen::VectorXd observation = env.Reset(0);
  planner.Reset(observation);
  std::vector<double> latencies;
  for (int s = 0; s < kSettle + steps; ++s) {
    observation = env.Step(planner.Act(observation)).observation;
    if (s >= kSettle) latencies.push_back(planner.last_step().latency_ms);
    progress.Update(++done);
  }
  return latencies;
}

// Plans as the planner scores them: N candidates of H steps, features
// uniform in their ranges (bounds, else +-scale), actions in [-1, 1], float.
struct Plans {
  at::Tensor observations, actions, last_observation, last_action;
};

Plans RandomPlans(const task::TaskSpec& spec, int64_t n, int64_t h) {
  torch::manual_seed(0);
  std::vector<at::Tensor> features;
  for (const task::TaskTable& feature : spec.root.Tables("observation")) {
    const double scale = feature.Number("scale", 1.0);
    std::vector<double> range = {-scale, scale};
    if (feature.Has("bounds")) range = feature.Numbers("bounds");
    features.push_back(torch::rand({n, h}) * (range[1] - range[0]) + range[0]);
  }
  const int64_t actions = static_cast<int64_t>(spec.root.Texts("actions").size());
  Plans plans;
  plans.observations = torch::stack(features, -1);
  plans.actions = torch::rand({n, h, actions}) * 2.0 - 1.0;
  plans.last_observation = plans.observations.select(0, 0).select(0, 0).clone();
  plans.last_action = torch::zeros({actions});
  return plans;
}

struct CostTimes {
  std::vector<double> value_us, gradient_us;
};

// PlanCosts as the planner calls it (inference mode), then with the
// gradient guidance takes.
CostTimes TimeCost(const planner::TaskCost& cost, const Plans& p, int repeats,
                   ProgressBar& progress, long long& done) {
  CostTimes times;
  for (int i = 0; i < repeats; ++i) {
    c10::InferenceMode inference;
    const auto start = Clock::now();
    const at::Tensor costs =
        cost.PlanCosts(p.observations, p.actions, p.last_observation, p.last_action).sum(1);
    times.value_us.push_back(Microseconds(start));
    progress.Update(++done);
  }
  for (int i = 0; i < repeats; ++i) {
    const at::Tensor observations = p.observations.clone().requires_grad_();
    const at::Tensor actions = p.actions.clone().requires_grad_();
    const auto start = Clock::now();
    cost.PlanCosts(observations, actions, p.last_observation, p.last_action).sum().backward();
    times.gradient_us.push_back(Microseconds(start));
    progress.Update(++done);
  }
  return times;
}

void RunBenchCost(const BenchCostOptions& o) {
  if (o.repeats < 1 || o.steps < 1 || o.threads < 1) {
    throw std::invalid_argument("--repeats, --steps and --threads must be >= 1");
  }
  at::set_num_threads(o.threads);
  const task::TaskSpec spec = task::LoadTaskSpec(o.task);
  const std::string model = o.model.empty() ? ShippedModelPath(spec.name) : o.model;
  const std::unique_ptr<planner::Planner> planner = planner::Planner::FromFile(model);
  const int n = planner->options().candidates, h = planner->options().horizon;
  const std::vector<task::TaskTable> tables = spec.root.Tables("cost");
  std::fprintf(stderr,
               "bench cost: %s, N %d x H %d (the tuned planner's), %d thread(s), warm step of %s\n",
               spec.name.c_str(), n, h, o.threads, model.c_str());

  long long done = 0;
  ProgressBar progress("bench cost", o.steps + 20 + 2LL * o.repeats * (tables.size() + 1));
  const std::unique_ptr<envs::Env> env = envs::MakeEnv(spec);
  const std::vector<double> warm = WarmSteps(*planner, *env, o.steps, progress, done);
  const double warm_p50_us = 1000.0 * Percentile(warm, 50);
  const Plans plans = RandomPlans(spec, n, h);

  Table table({"term", "kind", "p50_us", "p99_us", "grad_p50_us", "share_of_warm_step"});
  const auto add = [&](const std::string& term, const std::string& kind,
                       const planner::TaskCost& cost) {
    const CostTimes t = TimeCost(cost, plans, o.repeats, progress, done);
    const double p50 = Percentile(t.value_us, 50);
    table.AddRow({term, kind, FormatFixed(p50, 1), FormatFixed(Percentile(t.value_us, 99), 1),
                  FormatFixed(Percentile(t.gradient_us, 50), 1),
                  FormatFixed(100.0 * p50 / warm_p50_us, 1) + "%"});
  };
  for (size_t i = 0; i < tables.size(); ++i) {
    const std::string term = tables[i].Text("term");
    add("cost[" + std::to_string(i) + "] " + term, term == "expression" ? "formula" : "built-in",
        *planner::MakeTaskCostTerm(spec, static_cast<int>(i), planner->action_repeat()));
  }
  add("all terms", "sum", *planner::MakeTaskCost(spec, planner->action_repeat()));
  progress.Finish();
  table.AddRow({"warm step", "planner", FormatFixed(warm_p50_us, 1),
                FormatFixed(1000.0 * Percentile(warm, 99), 1), "-", "100.0%"});
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

}  // namespace

void AddBenchCostCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchCostOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "cost",
      "A task's cost per planner step, term by term (built-in terms and formulas), with and "
      "without its gradient, as a share of the shipped model's warm step");
  cmd->add_option("--task", options->task, "a built-in task or a task folder")
      ->capture_default_str()
      ->check(TaskNameOrFolder());
  cmd->add_option("--model", options->model,
                  "model whose tuned warm step is the yardstick (default: the task's shipped)");
  cmd->add_option("--repeats", options->repeats, "timed cost evaluations per term")
      ->capture_default_str();
  cmd->add_option("--steps", options->steps, "timed warm steps")->capture_default_str();
  cmd->add_option("--threads", options->threads, "LibTorch intra-op threads")
      ->capture_default_str();
  cmd->add_option("--csv", options->csv, "CSV output of the table")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchCost(*options); });
}

}  // namespace dfmpc::cli
