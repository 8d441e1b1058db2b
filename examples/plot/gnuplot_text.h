// Text pieces every gnuplot script of this library shares.
#ifndef DFMPC_EXAMPLES_PLOT_GNUPLOT_TEXT_H_
#define DFMPC_EXAMPLES_PLOT_GNUPLOT_TEXT_H_

#include <string>

#include "plot/plot.h"

namespace dfmpc::plot {

// `text` as a gnuplot single-quoted string literal (quotes doubled).
std::string QuoteGnuplot(const std::string& text);

// `color` as a quoted gnuplot colour, e.g. '#1f77b4'.
std::string QuotedColor(Rgb color);

// The lines that start a fresh session drawing a width x height PNG (white
// background, text taken literally) into `png_path`.
std::string PngPreamble(int width, int height, const std::string& png_path);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_GNUPLOT_TEXT_H_
