#include "plot/plot.h"

#include <array>

#include "plot/gnuplot_script.h"
#include "plot/render.h"
#include "plot/validate.h"

namespace dfmpc::plot {
namespace {

// Tableau 10 without its grey, which would read as a grid line.
constexpr std::array<Rgb, 9> kPalette = {{{0x1f, 0x77, 0xb4},
                                          {0xff, 0x7f, 0x0e},
                                          {0x2c, 0xa0, 0x2c},
                                          {0xd6, 0x27, 0x28},
                                          {0x94, 0x67, 0xbd},
                                          {0x8c, 0x56, 0x4b},
                                          {0xe3, 0x77, 0xc2},
                                          {0xbc, 0xbd, 0x22},
                                          {0x17, 0xbe, 0xcf}}};

}  // namespace

Rgb SeriesColor(std::size_t index) { return kPalette[index % kPalette.size()]; }

void WritePlotPng(const std::string& path, const std::vector<Panel>& panels, int width,
                  int panel_height) {
  ValidatePlot(panels, width, panel_height);
  RenderPng(path, [&](const std::string& png) {
    return GnuplotScript(panels, width, panel_height, png);
  });
}

}  // namespace dfmpc::plot
