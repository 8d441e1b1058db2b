// Input checks for WritePlotPng and WriteBarChartPng; see plot.h and
// bar_chart.h for the rules.
#ifndef DFMPC_EXAMPLES_PLOT_VALIDATE_H_
#define DFMPC_EXAMPLES_PLOT_VALIDATE_H_

#include <vector>

#include "plot/bar_chart.h"
#include "plot/plot.h"

namespace dfmpc::plot {

inline constexpr int kMinWidth = 200;
inline constexpr int kMinPanelHeight = 150;
inline constexpr int kMaxPixels = 10000;  // per side

// Throws std::invalid_argument naming the first offending panel and series.
void ValidatePlot(const std::vector<Panel>& panels, int width, int panel_height);

// Throws std::invalid_argument naming the first offending series and bar.
void ValidateBarChart(const BarChart& chart, int width, int height);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_VALIDATE_H_
