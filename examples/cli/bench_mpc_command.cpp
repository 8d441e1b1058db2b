// dfmpc bench mpc: per-control-step latency of the planner, replan against
// warm r = 1, 2, 4 (and warm r = 1 with block cache settings, each of them
// also with bfloat16 products and with ATen's kernels on request),
// across context
// lengths, candidate counts and sampling levels K (a distilled model's
// fewer levels make Reset and replan cheaper), in one run; and a long run
// that shows the bounded context cache keeps memory flat.
// Each row also counts the CPU tensors a control step allocates and, on the
// CPU, times the step's linear layers as bare products (the arithmetic
// floor that no fusion of the other work removes).
#include <ATen/Parallel.h>
#include <sys/resource.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/aten_kernels.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "linear_products.h"
#include "output_path.h"
#include "planner_policy.h"
#include "progress_bar.h"
#include "resident_memory.h"
#include "statistics.h"
#include "table.h"
#include "tensor_allocations.h"

namespace dfmpc::cli {
namespace {

const char kTask[] = "pendulum_swingup";

struct BenchMpcOptions {
  std::vector<int> contexts = {16, 64, 256};
  std::vector<int> candidates = {1, 8, 16};
  std::vector<int> warm_calls = {1, 2, 4};
  std::vector<std::string> block_cache;  // "F/R": warm r = 1 rows with the block cache
  bool cpu_bf16 = false;                 // each CPU row again with bfloat16 products
  bool aten_kernels = false;             // each CPU row again with ATen's kernels
  int horizon = 32;
  std::vector<int> levels = {16};
  int steps = 50;
  int repeats = 1;  // the rows run this many times in turn, each row's steps pooled
  int threads = 1;
  long long long_run = 0;
  bool skip_table = false;
  std::string device = "cpu";
  std::string model;
  std::string csv = "bench_mpc.csv";
};

// The shipped model's architecture with random weights and a window of
// `context + horizon` tokens: latency does not depend on the weights, and
// the shipped model was trained on 40-token windows only.
worldmodel::Checkpoint RandomModel(const worldmodel::Checkpoint& shipped, int window,
                                   c10::Device device) {
  worldmodel::Checkpoint checkpoint;
  checkpoint.info = shipped.info;
  checkpoint.info.config.max_positions = window;
  checkpoint.info.train_window = window;
  checkpoint.normalizer = shipped.normalizer;
  torch::manual_seed(0);
  checkpoint.model = worldmodel::DfTransformer(checkpoint.info.config);
  checkpoint.model->eval();
  checkpoint.model->to(device);
  return checkpoint;
}

struct Measured {
  std::vector<double> latencies;
  double token_forwards = 0.0, calls = 0.0;
  double allocations = 0.0, allocated_kib = 0.0;  // CPU tensors, per control step
  double page_faults = 0.0;                       // minor faults, per control step
  double reset_ms = 0.0;                          // Reset (the first plan), median

  // Pools `other`, a repeat of the same row: latencies joined, per-step
  // figures averaged over the repeats so far (`repeats` of them in this).
  void Pool(const Measured& other, int repeats) {
    latencies.insert(latencies.end(), other.latencies.begin(), other.latencies.end());
    const auto mean = [&](double mine, double theirs) {
      return (mine * repeats + theirs) / (repeats + 1);
    };
    token_forwards = mean(token_forwards, other.token_forwards);
    calls = mean(calls, other.calls);
    allocations = mean(allocations, other.allocations);
    allocated_kib = mean(allocated_kib, other.allocated_kib);
    page_faults = mean(page_faults, other.page_faults);
    reset_ms = mean(reset_ms, other.reset_ms);
  }
};

// Minor page faults of the calling thread so far: memory the allocator had
// to take from the system (a source of latency jitter).
long MinorPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Times Reset (the median of kResets), fills the context cache with
// `context` real steps, then times `steps`.
Measured Measure(planner::Planner& planner, envs::Env& env, int context, int steps,
                 ProgressBar& progress, long long& done) {
  constexpr int kResets = 5;
  Eigen::VectorXd observation = env.Reset(0);
  Measured m;
  std::vector<double> resets;
  for (int i = 0; i < kResets; ++i) {
    const auto start = std::chrono::steady_clock::now();
    planner.Reset(observation);
    resets.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  m.reset_ms = Percentile(resets, 50);
  for (int s = 0; s < context + steps; ++s) {
    const AllocationCount before = CpuTensorAllocations();
    const long faults_before = MinorPageFaults();
    const Eigen::VectorXd action = planner.Act(observation);
    const long faults = MinorPageFaults() - faults_before;
    const AllocationCount after = CpuTensorAllocations();
    observation = env.Step(action).observation;
    progress.Update(++done);
    if (s < context) continue;
    m.allocations += static_cast<double>(after.allocations - before.allocations) / steps;
    m.allocated_kib += static_cast<double>(after.bytes - before.bytes) / 1024.0 / steps;
    m.page_faults += static_cast<double>(faults) / steps;
    const planner::StepStats& stats = planner.last_step();
    m.latencies.push_back(stats.latency_ms);
    m.token_forwards += static_cast<double>(stats.token_forwards) / steps;
    m.calls += static_cast<double>(stats.calls) / steps;
  }
  return m;
}

// One row of the latency table: a planner configuration.
struct Row {
  std::string label;
  planner::PlannerOptions options;  // mode, r, block cache and graphs; sizes are filled per row
  bool aten_kernels = false;        // worldmodel::AtenKernels around the row's steps
};

// Replan, warm r for each --warm-calls, then warm r = 1 with each block
// cache setting; on a GPU every warm row runs eagerly and then with graphs,
// on the CPU with --cpu-bf16 each row in float and then in bfloat16, and
// with --aten-kernels each of those again with ATen's kernels.
std::vector<Row> TableRows(const BenchMpcOptions& o, bool cuda) {
  std::vector<Row> rows;
  const auto add_kernel_rows = [&](Row row) {
    rows.push_back(row);
    if (cuda || !o.aten_kernels) return;
    row.label += " aten";
    row.aten_kernels = true;
    rows.push_back(row);
  };
  const auto add_cpu_row = [&](Row row) {
    add_kernel_rows(row);
    if (cuda || !o.cpu_bf16) return;
    row.label += " bf16";
    row.options.cpu_bf16 = true;
    add_kernel_rows(row);
  };
  Row replan{"replan", {}};
  replan.options.mode = planner::PlanMode::kReplan;
  replan.options.cuda_graphs = false;
  add_cpu_row(replan);
  std::vector<Row> warm;
  for (int r : o.warm_calls) {
    Row row{"warm r=" + std::to_string(r), {}};
    row.options.calls_per_step = r;
    warm.push_back(row);
  }
  for (const std::string& setting : o.block_cache) {
    const BlockCacheSetting block = ParseBlockCache(setting);
    Row row{"warm r=1 block " + setting, {}};
    row.options.mode = planner::PlanMode::kWarm;
    row.options.front_tokens = block.front_tokens;
    row.options.refresh_every = block.refresh_every;
    warm.push_back(row);
  }
  for (Row& row : warm) {
    row.options.cuda_graphs = false;
    add_cpu_row(row);
    if (!cuda) continue;
    row.label += " graphs";
    row.options.cuda_graphs = true;
    rows.push_back(row);
  }
  return rows;
}

void RunLatencyTable(const BenchMpcOptions& o, const worldmodel::Checkpoint& shipped) {
  envs::EnvOptions env_options;
  env_options.episode_physics_steps = 1 << 30;  // one long run per configuration
  auto env = envs::MakeEnv(kTask, env_options);
  Table table({"context", "N", "K", "mode", "calls", "token_forwards", "p50_ms", "p99_ms",
               "jitter_ms", "speedup_p50", "reset_ms", "tensor_allocs", "alloc_kib", "page_faults",
               "products_ms", "products_share", "products_gflops"});
  const c10::Device device = worldmodel::ParseDevice(o.device);
  const std::vector<Row> rows = TableRows(o, device.is_cuda());
  long long total = 0, done = 0;
  for (int context : o.contexts) {
    total += static_cast<long long>(o.candidates.size() * o.levels.size() * rows.size()) *
             (context + o.steps) * o.repeats;
  }
  ProgressBar progress("bench mpc", total);
  for (int context : o.contexts) {
    const worldmodel::Checkpoint model = RandomModel(shipped, context + o.horizon, device);
    // One call's products, by its rows and whether its blocks multiply in bfloat16.
    std::map<std::pair<int64_t, bool>, double> products_ms_of_rows;
    for (int n : o.candidates) {
      double replan_p50 = 0.0;  // of the first K, which every row's speed-up is against
      for (int levels : o.levels) {
        // Every repeat runs all rows in turn, so that a drift of the
        // machine's speed reaches each row alike.
        std::vector<Measured> measured(rows.size());
        for (int repeat = 0; repeat < o.repeats; ++repeat) {
          for (size_t i = 0; i < rows.size(); ++i) {
            planner::PlannerOptions options = rows[i].options;
            options.horizon = o.horizon;
            options.levels = levels;
            options.candidates = n;
            options.context_length = context;
            planner::Planner planner(model, planner::MakeTaskCost(kTask), options);
            const worldmodel::AtenKernels kernels(rows[i].aten_kernels);
            const Measured m = Measure(planner, *env, context, o.steps, progress, done);
            if (repeat == 0) {
              measured[i] = m;
            } else {
              measured[i].Pool(m, repeat);
            }
          }
        }
        for (size_t i = 0; i < rows.size(); ++i) {
          const Measured& m = measured[i];
          const double p50 = Percentile(m.latencies, 50), p99 = Percentile(m.latencies, 99);
          if (rows[i].options.mode == planner::PlanMode::kReplan && replan_p50 == 0.0) {
            replan_p50 = p50;
          }
          std::vector<std::string> products = {"", "", ""};
          if (!device.is_cuda() && m.calls > 0.0) {
            // A call's rows: its candidates times its mean tokens.
            const int64_t call_rows = std::llround(n * m.token_forwards / m.calls);
            // Calls of up to 64 rows multiply in float whatever cpu_bf16 asks
            // (worldmodel/src/transposed_weights.h, kMaxRows).
            constexpr int64_t kFloatCallRows = 64;
            const bool bf16 = rows[i].options.cpu_bf16 && call_rows > kFloatCallRows;
            auto [entry, inserted] =
                products_ms_of_rows.emplace(std::make_pair(call_rows, bf16), 0.0);
            if (inserted) entry->second = LinearProductsMs(model.info.config, call_rows, bf16);
            const double step_ms = entry->second * m.calls;
            const double gflops =
                LinearFlopsPerRow(model.info.config) * call_rows / entry->second * 1e-6;
            products = {FormatFixed(step_ms, 2), FormatFixed(step_ms / p50, 2),
                        FormatFixed(gflops, 1)};
          }
          table.AddRow({std::to_string(context), std::to_string(n), std::to_string(levels),
                        rows[i].label, FormatFixed(m.calls, 1), FormatFixed(m.token_forwards, 1),
                        FormatFixed(p50, 2), FormatFixed(p99, 2), FormatFixed(p99 - p50, 2),
                        FormatFixed(replan_p50 / p50, 1), FormatFixed(m.reset_ms, 2),
                        FormatFixed(m.allocations, 0), FormatFixed(m.allocated_kib, 0),
                        FormatFixed(m.page_faults, 1), products[0], products[1], products[2]});
        }
      }
    }
  }
  progress.Finish();
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

// Warm r = 1 with the shipped model for `steps` control steps without a
// reset; prints resident memory early and at the end.
void RunLongRun(const BenchMpcOptions& o, const worldmodel::Checkpoint& shipped) {
  envs::EnvOptions env_options;
  env_options.episode_physics_steps = 1 << 30;
  auto env = envs::MakeEnv(kTask, env_options);
  planner::PlannerOptions options;
  options.candidates = 1;
  planner::Planner planner(shipped, planner::MakeTaskCost(kTask), options);
  Eigen::VectorXd observation = env->Reset(0);
  planner.Reset(observation);
  ProgressBar progress("long run, warm r=1 N=1", o.long_run);
  const long long early = std::min<long long>(1000, o.long_run);
  long early_kib = 0;
  for (long long s = 0; s < o.long_run; ++s) {
    observation = env->Step(planner.Act(observation)).observation;
    if (s + 1 == early) early_kib = ResidentKib();
    progress.Update(s + 1);
  }
  progress.Finish();
  const worldmodel::KvCache& cache = planner.context_cache();
  std::printf(
      "long run: %lld control steps; resident memory after %lld steps %ld KiB, at the "
      "end %ld KiB; context cache %d tokens (%lld evicted), %lld bytes of storage\n",
      o.long_run, early, early_kib, ResidentKib(), cache.persistent_size(),
      static_cast<long long>(cache.evicted()), static_cast<long long>(cache.StorageBytes()));
}

void RunBenchMpc(BenchMpcOptions o) {
  if (o.steps < 1 || o.repeats < 1 || o.threads < 1 || o.long_run < 0) {
    throw std::invalid_argument("--steps, --repeats and --threads must be >= 1, --long-run >= 0");
  }
  if (o.model.empty()) o.model = ShippedModelPath(kTask);
  at::set_num_threads(o.threads);
  const worldmodel::Checkpoint shipped =
      worldmodel::LoadCheckpoint(o.model, {kTask, 0}, worldmodel::ParseDevice(o.device));
  std::fprintf(stderr,
               "bench mpc: %s architecture (width %d, depth %d), H %d, %s, %d thread(s), "
               "%d timed steps per row after filling the context\n",
               kTask, shipped.info.config.width, shipped.info.config.depth, o.horizon,
               o.device.c_str(), o.threads, o.steps);
  if (!o.skip_table) RunLatencyTable(o, shipped);
  if (o.long_run > 0) RunLongRun(o, shipped);
}

}  // namespace

void AddBenchMpcCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchMpcOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "mpc",
      "Planner latency per control step: replan vs warm r = 1, 2, 4 (and the block cache); "
      "memory over a long run");
  cmd->add_option("--contexts", options->contexts, "context lengths")->capture_default_str();
  cmd->add_option("--candidates", options->candidates, "candidate counts N")->capture_default_str();
  cmd->add_option("--warm-calls", options->warm_calls, "calls per step r of the warm rows")
      ->capture_default_str();
  cmd->add_option("--block-cache", options->block_cache,
                  "also warm r = 1 rows with the block cache, each F/R: F front tokens, the whole "
                  "plan every R steps (e.g. 8/4)");
  cmd->add_flag("--cpu-bf16", options->cpu_bf16,
                "on the CPU, also each row with the model's linear layers multiplied in bfloat16 "
                "(PlannerOptions::cpu_bf16)");
  cmd->add_flag("--aten-kernels", options->aten_kernels,
                "on the CPU, also each row with ATen's operators instead of the fused kernels: "
                "rotary embeddings in elementwise operations, attention in batched matrix "
                "products, a norm and its modulation as two operators, ATen's bfloat16 "
                "conversions");
  cmd->add_option("--horizon", options->horizon, "plan tokens H")->capture_default_str();
  cmd->add_option("--levels", options->levels,
                  "sampling levels K, each its own rows (a model distilled to K samples with K); "
                  "speed-ups are against the first K's replan")
      ->capture_default_str();
  cmd->add_option("--steps", options->steps, "timed control steps per row")->capture_default_str();
  cmd->add_option("--repeats", options->repeats,
                  "run all rows this many times in turn and pool each row's steps (a drift of "
                  "the machine's speed then reaches every row alike)")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "LibTorch intra-op threads")
      ->capture_default_str();
  cmd->add_option("--long-run", options->long_run,
                  "also run this many warm steps with the shipped model, printing memory")
      ->capture_default_str();
  cmd->add_flag("--skip-table", options->skip_table, "only the long run");
  AddDeviceFlag(*cmd, options->device);
  cmd->add_option("--model", options->model,
                  "model whose architecture is timed (default: shipped)");
  cmd->add_option("--csv", options->csv, "CSV output of the latency table")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchMpc(*options); });
}

}  // namespace dfmpc::cli
