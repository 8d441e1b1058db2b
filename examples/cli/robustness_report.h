// The robustness report of `dfmpc report --robustness`: return against each
// perturbation parameter (envs/perturbation.h), per task and run label, from
// eval summary rows (summary.h). A row that fixes one parameter is a point
// at that parameter's value; an unperturbed row is the point at the
// parameter's default (noise 0, delay 0, scale 1) of every parameter the
// task was perturbed in. Rows that perturb several parameters at once or
// sample ranges are left out (and counted).
#ifndef DFMPC_EXAMPLES_CLI_ROBUSTNESS_REPORT_H_
#define DFMPC_EXAMPLES_CLI_ROBUSTNESS_REPORT_H_

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "plot/plot.h"
#include "summary.h"
#include "table.h"

namespace dfmpc::cli {

class RobustnessReport {
 public:
  // Throws std::invalid_argument when a row's perturbation does not parse,
  // or no row perturbs a single parameter.
  explicit RobustnessReport(const std::vector<SummaryRow>& rows);

  // One table per task and parameter: a row per label, a column per value,
  // cells "mean ± std (percent of the label's unperturbed return)".
  void Print(std::ostream& out) const { Write(out, /*markdown=*/false); }
  void PrintMarkdown(std::ostream& out) const { Write(out, /*markdown=*/true); }
  // Long format: task, parameter, value, label, episodes, return_mean,
  // return_std, percent_of_nominal (empty without an unperturbed run).
  void WriteCsv(const std::string& path) const;
  // One panel per task and parameter, a line per label.
  std::vector<plot::Panel> Panels() const;

 private:
  struct Curve {
    std::map<double, SummaryRow> points;  // by the parameter's value
  };
  struct Axis {
    std::string task, parameter;
    double nominal = 0.0;             // the parameter's default
    std::vector<std::string> labels;  // in order of first appearance
    std::map<std::string, Curve> curves;
  };

  void Write(std::ostream& out, bool markdown) const;
  Table AxisTable(const Axis& axis) const;
  std::optional<double> PercentOfNominal(const Axis& axis, const std::string& label,
                                         const SummaryRow& row) const;

  std::vector<Axis> axes_;
  std::size_t skipped_rows_ = 0;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_ROBUSTNESS_REPORT_H_
