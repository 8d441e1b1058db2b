// Turns validated panels into a self-contained gnuplot script (data inline).
#ifndef DFMPC_EXAMPLES_PLOT_GNUPLOT_SCRIPT_H_
#define DFMPC_EXAMPLES_PLOT_GNUPLOT_SCRIPT_H_

#include <string>
#include <vector>

#include "plot/plot.h"

namespace dfmpc::plot {

// A script that draws `panels` with the pngcairo terminal into `png_path`.
// Expects input that passed ValidatePlot.
std::string GnuplotScript(const std::vector<Panel>& panels, int width, int panel_height,
                          const std::string& png_path);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_GNUPLOT_SCRIPT_H_
