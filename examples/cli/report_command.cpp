// dfmpc report: the benchmark table and bar chart of an eval summary.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "atomic_file.h"
#include "commands.h"
#include "output_path.h"
#include "plot/bar_chart.h"
#include "report.h"
#include "summary.h"

namespace dfmpc::cli {
namespace {

struct ReportOptions {
  std::string summary, png, markdown;
};

void RunReport(const ReportOptions& o) {
  const Report report(ReadSummary(o.summary));
  report.Print(std::cout);
  std::cout << std::flush;  // before the messages on stderr
  if (!o.markdown.empty()) {
    std::ostringstream markdown;
    report.PrintMarkdown(markdown);
    internal::WriteFileAtomically(o.markdown, markdown.str());
    std::fprintf(stderr, "wrote %s\n", o.markdown.c_str());
  }
  if (!o.png.empty()) {
    plot::WriteBarChartPng(o.png, report.ReturnChart());
    std::fprintf(stderr, "wrote %s\n", o.png.c_str());
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
      "the model policies.");
  cmd->add_option("--summary", options->summary, "CSV summary written by `dfmpc eval --summary`")
      ->required();
  cmd->add_option("--png", options->png, "also draw the returns as a grouped bar chart (PNG)")
      ->check(OutputFileInExistingDirectory());
  cmd->add_option("--markdown", options->markdown, "also write the tables as Markdown")
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunReport(*options); });
}

}  // namespace dfmpc::cli
