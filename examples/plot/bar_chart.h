// PNG grouped bar charts, e.g. benchmark returns: one group of bars per
// category along x (a task), one bar per series in every group (a policy),
// each with an error bar. Drawn by gnuplot as the line plots of plot.h are.
#ifndef DFMPC_EXAMPLES_PLOT_BAR_CHART_H_
#define DFMPC_EXAMPLES_PLOT_BAR_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace dfmpc::plot {

struct Bar {
  double value = 0.0;
  double error = 0.0;  // half-length of the error bar; 0 draws none
};

// One bar per category, in the chart's category order, coloured
// SeriesColor(index of the series); a missing bar leaves its slot empty.
struct BarSeries {
  std::string label;  // its legend entry
  std::vector<std::optional<Bar>> bars;
  bool hatched = false;  // hatched, not solid: e.g. values quoted, not measured
};

struct BarChart {
  std::string title, y_label;
  double y_min = 0.0, y_max = 1.0;  // the y axis, fixed
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
};

// Writes a width x height PNG of `chart` at `path`, the legend below the axes.
//
// Throws std::invalid_argument, before touching the file system, when there
// are no categories or no series, a series has not one entry per category or
// no bar at all, a value or error is non-finite, an error is negative, the y
// range is non-finite or empty, a text field holds a control character, or
// the size is outside [200, 10000] x [150, 10000].
//
// Atomic as WritePlotPng: on failure throws std::runtime_error saying why
// and leaves no new file behind.
void WriteBarChartPng(const std::string& path, const BarChart& chart, int width = 1000,
                      int height = 500);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_BAR_CHART_H_
