// PNG line plots for people to look at: loss curves, error vs horizon,
// closed-loop trajectories. Rendering is done by gnuplot (Debian package
// gnuplot-nox, pngcairo terminal), run as a child process, so a rendering
// failure can never take the calling program down with it.
#ifndef DFMPC_EXAMPLES_PLOT_PLOT_H_
#define DFMPC_EXAMPLES_PLOT_PLOT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::plot {

// One line: points (x[i], y[i]) joined in the given order. A series of a
// single point is drawn as a dot. An empty label leaves it out of the legend.
struct Series {
  std::string label;
  std::vector<double> x, y;
  bool mark_points = false;  // also a dot at every point of the line
};

// One set of axes. The legend sits to the right of the axes, never on the data.
struct Panel {
  std::string title, x_label, y_label;
  bool log_y = false;
  std::vector<Series> series;
};

struct Rgb {
  std::uint8_t r, g, b;
  bool operator==(const Rgb& other) const {
    return r == other.r && g == other.g && b == other.b;
  }
};

// The colour of the index-th series of a panel (the palette repeats).
Rgb SeriesColor(std::size_t index);

// Writes a width x (panels.size() * panel_height) PNG at `path`, the panels
// stacked top to bottom with their axes aligned left and right.
//
// Throws std::invalid_argument, before touching the file system, when there
// are no panels, a panel without series, a series without points, x and y of
// different sizes, a non-finite (NaN or infinite) coordinate, a non-positive
// y on a log_y panel, a control character (e.g. a newline) in a text field,
// a width outside [200, 10000], a panel_height below 150 or a total height
// above 10000. Non-finite values are not skipped: a NaN loss is a finding the
// caller should see, not hide.
//
// Atomic: renders to a temporary file beside `path` and renames it into
// place, so `path` holds either its old content or the complete new plot. On
// any failure (directory missing or unwritable, gnuplot absent or failing)
// throws std::runtime_error saying why and leaves no new file behind.
void WritePlotPng(const std::string& path, const std::vector<Panel>& panels,
                  int width = 900, int panel_height = 350);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_PLOT_H_
