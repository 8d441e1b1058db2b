// robot_controller: drives a MuJoCo "robot" at a fixed control rate with the
// AsyncPlanner and reports the return, deadline misses and the latency the
// control thread saw. Given several rates or deadline kinds it runs each
// pair in turn and ends with a table of them side by side (--csv writes it).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
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

double MeanReturn(const robot_controller::LoopReport& r) {
  return r.returns.empty()
             ? 0
             : std::accumulate(r.returns.begin(), r.returns.end(), 0.0) / r.returns.size();
}

double MaxLatency(const robot_controller::LoopReport& r) {
  return *std::max_element(r.step_latency_ms.begin(), r.step_latency_ms.end());
}

void PrintReport(const robot_controller::LoopReport& r) {
  const dfmpc::planner::AsyncStats& s = r.totals;
  const double steps = std::max<double>(1, s.steps);
  std::printf("task %s, period %.1f ms, max wait %.1f ms, %lld steps\n", r.task.c_str(),
              r.period_ms, r.max_wait_ms, static_cast<long long>(s.steps));
  std::printf("return: mean %.1f over %zu complete episodes\n", MeanReturn(r), r.returns.size());
  if (r.unfinished_steps > 0) {
    std::printf("last episode cut short: return %.1f after %d control steps\n", r.unfinished_return,
                r.unfinished_steps);
  }
  std::printf("Step latency (ms): p50 %.3f  p99 %.3f  max %.3f\n",
              Percentile(r.step_latency_ms, 0.5), Percentile(r.step_latency_ms, 0.99),
              MaxLatency(r));
  std::printf("deadline misses: %lld (%.2f%%), action age: mean %.3f, max %lld steps\n",
              static_cast<long long>(s.misses), 100.0 * s.misses / steps,
              s.total_action_age / steps, static_cast<long long>(s.max_action_age));
  std::printf(
      "plans: %lld (mean %.2f ms, max %.2f ms), planner errors: %lld, "
      "loop overruns: %lld\n",
      static_cast<long long>(s.plans), s.total_plan_ms / std::max<double>(1, s.plans),
      s.max_plan_ms, static_cast<long long>(s.planner_errors), static_cast<long long>(r.overruns));
  std::printf(
      "optimizations cut short by the deadline: %lld, late: %lld (stopped: %lld), "
      "fallbacks: %lld\n",
      static_cast<long long>(s.cut_short), static_cast<long long>(s.late),
      static_cast<long long>(s.stopped), static_cast<long long>(s.fallbacks));
  if (!s.last_error.empty()) std::printf("last planner error: %s\n", s.last_error.c_str());
}

// One run per line, as CSV (every cell a number or a plain word).
struct SummaryLine {
  std::string deadline_kind;
  robot_controller::LoopReport report;
};

std::vector<std::string> SummaryHeader() {
  return {"rate_hz",      "deadline_kind", "return",     "step_p50_ms",     "step_p99_ms",
          "step_max_ms",  "misses",        "miss_share", "action_age_mean", "action_age_max",
          "plan_mean_ms", "late",          "stopped",    "errors"};
}

std::vector<std::string> SummaryCells(const SummaryLine& line) {
  const robot_controller::LoopReport& r = line.report;
  const dfmpc::planner::AsyncStats& s = r.totals;
  const double steps = std::max<double>(1, s.steps);
  const auto fixed = [](double value, int decimals) {
    char cell[64];
    std::snprintf(cell, sizeof(cell), "%.*f", decimals, value);
    return std::string(cell);
  };
  return {fixed(1000.0 / r.period_ms, 1),
          line.deadline_kind,
          r.returns.empty() ? "n/a" : fixed(MeanReturn(r), 1),  // no episode ended
          fixed(Percentile(r.step_latency_ms, 0.5), 2),
          fixed(Percentile(r.step_latency_ms, 0.99), 2),
          fixed(MaxLatency(r), 2),
          std::to_string(s.misses),
          fixed(s.misses / steps, 4),
          fixed(s.total_action_age / steps, 3),
          std::to_string(s.max_action_age),
          fixed(s.total_plan_ms / std::max<double>(1, s.plans), 2),
          std::to_string(s.late),
          std::to_string(s.stopped),
          std::to_string(s.planner_errors)};
}

// The runs side by side, each column as wide as its widest cell.
void PrintSummary(const std::vector<SummaryLine>& lines) {
  std::vector<std::vector<std::string>> rows = {SummaryHeader()};
  for (const SummaryLine& line : lines) rows.push_back(SummaryCells(line));
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::printf("\n");
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      std::printf("%*s%s", static_cast<int>(widths[i]), row[i].c_str(),
                  i + 1 < row.size() ? "  " : "\n");
    }
  }
}

// Whether WriteCsv's temporary file can be made (it is removed again).
bool Writable(const std::string& path) {
  const std::string temporary = path + ".tmp";
  if (!std::ofstream(temporary)) return false;
  std::remove(temporary.c_str());
  return true;
}

// Written whole to a temporary file, then renamed into place.
void WriteCsv(const std::string& path, const std::vector<SummaryLine>& lines) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    const auto write_row = [&](const std::vector<std::string>& cells) {
      for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << cells[i];
      out << "\n";
    };
    write_row(SummaryHeader());
    for (const SummaryLine& line : lines) write_row(SummaryCells(line));
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write " + path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Controls a MuJoCo task at a fixed rate with dfmpc's AsyncPlanner"};
  robot_controller::LoopOptions options;
  std::vector<double> rates{options.rate_hz};
  std::vector<std::string> deadline_kinds{"start-only"};
  std::string csv;
  app.add_option("--model", options.model, "dfmpc world-model file (e.g. pendulum_swingup.pt)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--task", options.task,
                 "the MuJoCo task that plays the robot: a built-in name or a task folder "
                 "(default: the model's own task)");
  app.add_option("--rate", rates, "control rates in Hz (each runs in turn)")->capture_default_str();
  app.add_option("--max-wait-ms", options.max_wait_ms,
                 "longest wait for the fresh plan (default: 3/4 of the period)");
  app.add_option("--deadline-kind", deadline_kinds,
                 "whether a plan's model call that would end past the wait stops (hard) or "
                 "runs to its end (start-only); each runs in turn")
      ->check(CLI::IsMember({"hard", "start-only"}))
      ->capture_default_str();
  app.add_option("--steps", options.steps, "control steps, over consecutive episodes")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the first episode")->capture_default_str();
  app.add_option("--threads", options.threads, "LibTorch threads of the planning thread")
      ->capture_default_str();
  app.add_option("--csv", csv, "also write the runs' summary table to this CSV file");
  CLI11_PARSE(app, argc, argv);
  if (!csv.empty() && !Writable(csv)) {  // before the runs, not after them
    std::fprintf(stderr, "robot_controller: cannot write %s\n", csv.c_str());
    return 1;
  }
  try {
    std::vector<SummaryLine> lines;
    for (const double rate : rates) {
      for (const std::string& kind : deadline_kinds) {
        options.rate_hz = rate;
        options.deadline_kind = dfmpc::planner::ParseDeadlineKind(kind);
        std::printf("== %.1f Hz, %s deadline\n", rate, kind.c_str());
        lines.push_back({kind, robot_controller::RunControlLoop(options)});
        PrintReport(lines.back().report);
      }
    }
    if (lines.size() > 1) PrintSummary(lines);
    if (!csv.empty()) WriteCsv(csv, lines);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "robot_controller: %s\n", e.what());
    return 1;
  }
  return 0;
}
