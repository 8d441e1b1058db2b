#include "plot/gnuplot_text.h"

#include <cstdio>

namespace dfmpc::plot {

std::string QuoteGnuplot(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string QuotedColor(Rgb color) {
  char hex[8];
  std::snprintf(hex, sizeof(hex), "#%02x%02x%02x", color.r, color.g, color.b);
  return QuoteGnuplot(hex);
}

std::string PngPreamble(int width, int height, const std::string& png_path) {
  return "reset session\nset terminal pngcairo size " + std::to_string(width) + ',' +
         std::to_string(height) + " noenhanced font ',11' background rgb 'white'\nset output " +
         QuoteGnuplot(png_path) + '\n';
}

}  // namespace dfmpc::plot
