#include "plot/plot.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>

#include "atomic_file.h"
#include "plot/gnuplot_script.h"
#include "plot/subprocess.h"
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

bool StartsWithPngSignature(const std::string& path) {
  static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
  std::array<char, sizeof(kSignature) - 1> head{};
  std::ifstream file(path, std::ios::binary);
  file.read(head.data(), head.size());
  return file && std::equal(head.begin(), head.end(), kSignature);
}

}  // namespace

Rgb SeriesColor(std::size_t index) { return kPalette[index % kPalette.size()]; }

void WritePlotPng(const std::string& path, const std::vector<Panel>& panels, int width,
                  int panel_height) {
  ValidatePlot(panels, width, panel_height);
  internal::AtomicFile png(path);
  // The script is a scratch file beside the plot, never committed: removed
  // when `script` goes out of scope.
  internal::AtomicFile script(path + ".gp");
  std::ofstream script_file(script.temporary_path(), std::ios::binary);
  script_file << GnuplotScript(panels, width, panel_height, png.temporary_path());
  if (!script_file.flush()) {
    throw std::runtime_error("cannot write a gnuplot script beside " + path);
  }
  ProcessResult gnuplot;
  try {
    gnuplot = RunProcess({"gnuplot", script.temporary_path()});
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(std::string(error.what()) + " (Debian package gnuplot-nox)");
  }
  if (!gnuplot.exited_normally || gnuplot.exit_code != 0) {
    throw std::runtime_error("gnuplot failed to draw " + path + ":\n" + gnuplot.output);
  }
  if (!StartsWithPngSignature(png.temporary_path())) {
    throw std::runtime_error("gnuplot wrote no PNG for " + path + ":\n" + gnuplot.output);
  }
  png.Commit();
}

}  // namespace dfmpc::plot
