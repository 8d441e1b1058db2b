// The benchmark report of `dfmpc report`: a summary's rows (summary.h) as a
// return table, a latency table, a smoothness table and a grouped bar chart,
// with published returns of TD-MPC2 beside ours.
#ifndef DFMPC_EXAMPLES_CLI_REPORT_H_
#define DFMPC_EXAMPLES_CLI_REPORT_H_

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "plot/bar_chart.h"
#include "summary.h"
#include "table.h"

namespace dfmpc::cli {

// Rows are tasks and columns labels, both in order of first appearance in
// the summary; a later row replaces an earlier one of the same task and
// label (a rerun). Runs on a perturbed environment are left out (and
// counted): robustness_report.h shows them.
class Report {
 public:
  // Expects rows as ReadSummary returns them; throws std::invalid_argument
  // when none of them is unperturbed.
  explicit Report(const std::vector<SummaryRow>& rows);

  // The tables, aligned for a terminal.
  void Print(std::ostream& out) const { Write(out, /*markdown=*/false); }
  // The tables as Markdown, with headings.
  void PrintMarkdown(std::ostream& out) const { Write(out, /*markdown=*/true); }
  // Mean return per task and label, error bars one standard deviation, y
  // from 0 to 1000 (the most a 1000-step episode can return).
  plot::BarChart ReturnChart() const;

 private:
  void Write(std::ostream& out, bool markdown) const;
  // A cell's text, or none when its row lacks what the table shows.
  using CellText = std::function<std::optional<std::string>(const SummaryRow&)>;
  Table ReturnTable() const;
  // Tasks by the labels that have a `text` for some task; "-" elsewhere.
  Table LabelTable(const CellText& text) const;
  std::vector<std::size_t> LabelsWith(const CellText& text) const;
  // Whether some task of the report has a published return.
  bool HasAnchors() const;

  std::vector<std::string> tasks_, labels_;
  std::vector<std::vector<std::optional<SummaryRow>>> cells_;  // [task][label]
  int usual_episodes_ = 0;  // the most common episode count; cells note others
  std::size_t perturbed_runs_ = 0;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_REPORT_H_
