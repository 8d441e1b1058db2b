// What the plot tests share: decoding a PNG, counting its colours, and a
// fixture with a fresh scratch directory per test.
#ifndef DFMPC_TESTS_PLOT_PLOT_TESTING_H_
#define DFMPC_TESTS_PLOT_PLOT_TESTING_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <vector>

#include "plot/plot.h"

namespace dfmpc::plot {

struct Image {
  int width = 0, height = 0;
  std::vector<Rgb> pixels;
};

// Throws std::runtime_error when `path` is not a decodable image.
Image Decode(const std::filesystem::path& path);

std::size_t DistinctColours(const Image& image);

// Pixels within a small distance of `colour` (line cores; edges are blended).
std::size_t PixelsNear(const Image& image, Rgb colour);

// dir_ is an empty directory of the test's own, removed afterwards.
class PlotTest : public testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Everything under dir_.
  std::vector<std::filesystem::path> Entries() const;

  std::filesystem::path dir_;
};

}  // namespace dfmpc::plot

#endif  // DFMPC_TESTS_PLOT_PLOT_TESTING_H_
