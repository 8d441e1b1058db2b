#include "plot/render.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>

#include "atomic_file.h"
#include "plot/subprocess.h"

namespace dfmpc::plot {
namespace {

bool StartsWithPngSignature(const std::string& path) {
  static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
  std::array<char, sizeof(kSignature) - 1> head{};
  std::ifstream file(path, std::ios::binary);
  file.read(head.data(), head.size());
  return file && std::equal(head.begin(), head.end(), kSignature);
}

}  // namespace

void RenderPng(const std::string& path,
               const std::function<std::string(const std::string& png)>& script_for) {
  internal::AtomicFile png(path);
  // The script is a scratch file beside the plot, never committed: removed
  // when `script` goes out of scope.
  internal::AtomicFile script(path + ".gp");
  std::ofstream script_file(script.temporary_path(), std::ios::binary);
  script_file << script_for(png.temporary_path());
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
