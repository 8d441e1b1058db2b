// Return against latency per control step, the picture of what each
// planner setting costs and keeps (`dfmpc report --latency-png`).
#ifndef DFMPC_EXAMPLES_CLI_LATENCY_PLOT_H_
#define DFMPC_EXAMPLES_CLI_LATENCY_PLOT_H_

#include <vector>

#include "plot/plot.h"
#include "summary.h"

namespace dfmpc::cli {

// A panel per task (in order of first appearance) and in it a series per
// label that has latency figures: a segment from the run's p50 to its p99
// latency at its mean return. Perturbed runs are left out; a later row of a
// task and label replaces an earlier one, as in the report's tables. Series
// keep the labels' order of first appearance. Throws std::invalid_argument
// when no unperturbed row has latency figures.
std::vector<plot::Panel> ReturnAgainstLatencyPanels(const std::vector<SummaryRow>& rows);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_LATENCY_PLOT_H_
