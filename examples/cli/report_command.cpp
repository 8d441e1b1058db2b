// dfmpc report: the benchmark table and bar chart of an eval summary.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "atomic_file.h"
#include "commands.h"
#include "latency_plot.h"
#include "output_path.h"
#include "plot/bar_chart.h"
#include "plot/plot.h"
#include "report.h"
#include "robustness_report.h"
#include "summary.h"

namespace dfmpc::cli {
namespace {

struct ReportOptions {
  std::string summary, png, markdown, csv, latency_png;
  bool robustness = false;
};

void Wrote(const std::string& path) { std::fprintf(stderr, "wrote %s\n", path.c_str()); }

// Prints either kind of report and writes its Markdown when asked.
template <typename AnyReport>
void PrintAndWriteMarkdown(const AnyReport& report, const ReportOptions& o) {
  report.Print(std::cout);
  std::cout << std::flush;  // before the messages on stderr
  if (o.markdown.empty()) return;
  std::ostringstream markdown;
  report.PrintMarkdown(markdown);
  internal::WriteFileAtomically(o.markdown, markdown.str());
  Wrote(o.markdown);
}

void RunReport(const ReportOptions& o) {
  const std::vector<SummaryRow> rows = ReadSummary(o.summary);
  if (o.robustness) {
    const RobustnessReport report(rows);
    PrintAndWriteMarkdown(report, o);
    if (!o.csv.empty()) {
      report.WriteCsv(o.csv);
      Wrote(o.csv);
    }
    if (!o.png.empty()) {
      plot::WritePlotPng(o.png, report.Panels(), 900, 300);
      Wrote(o.png);
    }
    return;
  }
  const Report report(rows);
  PrintAndWriteMarkdown(report, o);
  if (!o.png.empty()) {
    plot::WriteBarChartPng(o.png, report.ReturnChart());
    Wrote(o.png);
  }
  if (!o.latency_png.empty()) {
    plot::WritePlotPng(o.latency_png, ReturnAgainstLatencyPanels(rows), 900, 300);
    Wrote(o.latency_png);
  }
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd =
      app.add_subcommand("report", "Print the benchmark table of `dfmpc eval --summary` runs");
  cmd->footer(
      "Rows are tasks, columns the runs' labels in order of first appearance (a later row of a "
      "task and label replaces an earlier one): mean ± std return, the success rate where the "
      "task has one, TD-MPC2's published returns beside; then the latency per control step of "
      "the model policies. With --robustness: for runs on perturbed environments (eval "
      "--perturb), the return against each perturbation parameter per task and label.");
  cmd->add_option("--summary", options->summary, "CSV summary written by `dfmpc eval --summary`")
      ->required();
  auto* robustness = cmd->add_flag(
      "--robustness", options->robustness,
      "report the runs on perturbed environments: return against each perturbation parameter");
  cmd->add_option("--png", options->png,
                  "also draw the returns as a grouped bar chart (with --robustness: return "
                  "against each parameter, a panel per task and parameter) (PNG)")
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--latency-png", options->latency_png,
                  "also draw each run's mean return against its latency per control step, a "
                  "segment from p50 to p99, a panel per task (PNG)")
      ->check(OutputFileInExistingDirectory())
      ->excludes(robustness);
  cmd->add_option("--markdown", options->markdown, "also write the tables as Markdown")
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--csv", options->csv,
                  "with --robustness: also write every point (task, parameter, value, label) as "
                  "CSV")
      ->check(OutputFileInExistingDirectory())
      ->needs(robustness);
  cmd->callback([options] { RunReport(*options); });
}

}  // namespace dfmpc::cli
