// dfmpc bench stalls: how long the machine keeps a thread that only
// computes from running, under the loads and scheduling of `dfmpc bench
// deadline`. The thread, pinned to the same CPU, works in periods as a
// control loop does (busy for part of each period, asleep for the rest) on
// a fixed arithmetic chunk of a few microseconds, reading the clock after
// each chunk. A chunk that took milliseconds was a stall: no model, no
// allocation and no system call ran in it, so it bounds from below what a
// deadline can promise on this machine.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "cpu_load.h"
#include "cpu_stalls.h"
#include "output_path.h"
#include "progress_bar.h"
#include "statistics.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchStallsOptions {
  std::vector<std::string> loads = {"none", "other-core"};
  std::vector<std::string> scheduling = {"normal"};
  double seconds = 10.0;   // per row
  double period_ms = 8.0;  // a control period
  double busy_ms = 5.0;    // computing at its start, then asleep until the next
  double chunk_us = 20.0;  // the work between two clock reads
  std::string csv = "bench_stalls.csv";
};

double MillisecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// `iterations` dependent multiply-adds on a value the compiler cannot know,
// kept by a volatile store.
volatile double compute_state = 0.5;
void Compute(long iterations) {
  double x = compute_state;
  for (long i = 0; i < iterations; ++i) x = x * 0.999 + 0.25;
  compute_state = x;
}

// Iterations of Compute that take `chunk_us` on this CPU: the fastest of
// repeated timings, as a stall can only lengthen one.
long CalibrateChunk(double chunk_us) {
  constexpr long kProbe = 100000;
  double fastest_ms = 1e9;
  for (int trial = 0; trial < 20; ++trial) {
    const Clock::time_point start = Clock::now();
    Compute(kProbe);
    fastest_ms = std::min(fastest_ms, MillisecondsBetween(start, Clock::now()));
  }
  return std::max(1L, static_cast<long>(kProbe * chunk_us * 1e-3 / fastest_ms));
}

struct Row {
  std::vector<double> chunk_ms;  // clock read to clock read, busy spans only
  StallCounters stalls;          // over the whole row
};

Row MeasureRow(const BenchStallsOptions& o, long iterations, int cpu, ProgressBar& progress,
               double& done_seconds) {
  Row row;
  row.chunk_ms.reserve(static_cast<std::size_t>(o.seconds * 1e3 * o.busy_ms / o.period_ms /
                                                (o.chunk_us * 1e-3) * 1.1) +
                       1024);
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(o.period_ms));
  const auto busy = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(o.busy_ms));
  const StallCounters before = ReadStallCounters(cpu);
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  for (Clock::time_point period_start = start; period_start < end; period_start += period) {
    std::this_thread::sleep_until(period_start);
    Clock::time_point previous = Clock::now();
    while (previous - period_start < busy) {
      Compute(iterations);
      const Clock::time_point now = Clock::now();
      row.chunk_ms.push_back(MillisecondsBetween(previous, now));
      previous = now;
    }
    progress.Update(
        static_cast<long long>(done_seconds + MillisecondsBetween(start, previous) * 1e-3));
  }
  done_seconds += o.seconds;
  row.stalls = ReadStallCounters(cpu) - before;
  return row;
}

void AddResultRow(Table& table, std::vector<std::string> cells, const Row& row) {
  cells.push_back(std::to_string(row.chunk_ms.size()));
  cells.push_back(FormatFixed(Percentile(row.chunk_ms, 50) * 1e3, 1));
  cells.push_back(FormatFixed(Percentile(row.chunk_ms, 99.9) * 1e3, 1));
  cells.push_back(FormatFixed(Percentile(row.chunk_ms, 100), 2));
  for (double threshold_ms : {0.5, 2.0}) {
    const auto over = std::count_if(row.chunk_ms.begin(), row.chunk_ms.end(),
                                    [threshold_ms](double ms) { return ms > threshold_ms; });
    cells.push_back(std::to_string(over));
  }
  cells.push_back(FormatFixed(row.stalls.run_queue_wait_ms, 1));
  cells.push_back(FormatFixed(row.stalls.steal_ms, 0));
  table.AddRow(cells);
}

void RunBenchStalls(const BenchStallsOptions& o) {
  if (!(o.seconds > 0.0)) throw std::invalid_argument("--seconds must be > 0");
  if (!(o.chunk_us > 0.0)) throw std::invalid_argument("--chunk-us must be > 0");
  if (!(o.busy_ms > 0.0 && o.busy_ms <= o.period_ms)) {
    throw std::invalid_argument("--busy-ms must be in (0, --period-ms]");
  }
  if (o.chunk_us * 1e-3 > o.busy_ms) {
    throw std::invalid_argument("--chunk-us must fit in --busy-ms");
  }
  std::vector<LoadKind> loads;
  for (const std::string& load : o.loads) loads.push_back(ParseLoadKind(load));
  const BenchCpus cpus = PinBenchThread(o.scheduling);
  const int bench_cpu = cpus.bench, other_cpu = cpus.other;
  const long iterations = CalibrateChunk(o.chunk_us);
  std::fprintf(stderr,
               "bench stalls: CPU %d, %.0f us chunks (%ld multiply-adds), busy %.1f of every "
               "%.1f ms, %.0f s per row\n",
               bench_cpu, o.chunk_us, iterations, o.busy_ms, o.period_ms, o.seconds);
  Table table({"load", "scheduling", "seconds", "chunks", "chunk_p50_us", "chunk_p999_us",
               "chunk_max_ms", "chunks_over_0.5ms", "chunks_over_2ms", "queue_wait_ms",
               "steal_ms"});
  const double total_seconds = o.seconds * static_cast<double>(loads.size() * o.scheduling.size());
  ProgressBar progress("bench stalls", static_cast<long long>(total_seconds), "s");
  double done_seconds = 0.0;
  for (LoadKind load : loads) {
    const CpuLoad competing(load, bench_cpu, other_cpu);
    for (const std::string& scheduling : o.scheduling) {
      const bool fifo = scheduling == "fifo";
      if (fifo) MakeCallingThreadRealtime(kBenchRealtimePriority);
      const Row row = MeasureRow(o, iterations, bench_cpu, progress, done_seconds);
      if (fifo) MakeCallingThreadNormal();
      AddResultRow(table, {LoadKindName(load), scheduling, FormatFixed(o.seconds, 1)}, row);
    }
  }
  progress.Update(static_cast<long long>(total_seconds));
  progress.Finish();
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

}  // namespace

void AddBenchStallsCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchStallsOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "stalls", "How long the machine keeps a computing thread from running (no model)");
  AddLoadOptions(*cmd, options->loads, options->scheduling,
                 "busy for --busy-ms of every --period-ms as in other rows");
  cmd->add_option("--seconds", options->seconds, "length of each row")->capture_default_str();
  cmd->add_option("--period-ms", options->period_ms, "the loop's period")->capture_default_str();
  cmd->add_option("--busy-ms", options->busy_ms, "computing at the start of each period")
      ->capture_default_str();
  cmd->add_option("--chunk-us", options->chunk_us, "work between two clock reads")
      ->capture_default_str();
  cmd->add_option("--csv", options->csv, "CSV output")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchStalls(*options); });
}

}  // namespace dfmpc::cli
