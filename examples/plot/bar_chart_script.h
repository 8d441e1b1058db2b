// Turns a validated bar chart into a self-contained gnuplot script.
#ifndef DFMPC_EXAMPLES_PLOT_BAR_CHART_SCRIPT_H_
#define DFMPC_EXAMPLES_PLOT_BAR_CHART_SCRIPT_H_

#include <string>

#include "plot/bar_chart.h"

namespace dfmpc::plot {

// A script that draws `chart` with the pngcairo terminal into `png_path`.
// Expects input that passed ValidateBarChart.
std::string BarChartScript(const BarChart& chart, int width, int height,
                           const std::string& png_path);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_BAR_CHART_SCRIPT_H_
