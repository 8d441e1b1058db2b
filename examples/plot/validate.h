// Input checks for WritePlotPng; see plot.h for the rules.
#ifndef DFMPC_EXAMPLES_PLOT_VALIDATE_H_
#define DFMPC_EXAMPLES_PLOT_VALIDATE_H_

#include <vector>

#include "plot/plot.h"

namespace dfmpc::plot {

inline constexpr int kMinWidth = 200;
inline constexpr int kMinPanelHeight = 150;
inline constexpr int kMaxPixels = 10000;  // per side

// Throws std::invalid_argument naming the first offending panel and series.
void ValidatePlot(const std::vector<Panel>& panels, int width, int panel_height);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_VALIDATE_H_
