#include "plot/bar_chart.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "plot/plot.h"
#include "plot_testing.h"

namespace dfmpc::plot {
namespace {

namespace fs = std::filesystem;

class BarChartTest : public PlotTest {};

// Three tasks, two policies and published anchors (hatched), the last with a
// missing bar.
BarChart Returns() {
  return BarChart{
      "Return per episode, mean ± std",
      "return",
      0.0,
      1000.0,
      {"pendulum_swingup", "cartpole_swingup", "reacher"},
      {{"random", {Bar{12.0, 3.0}, Bar{150.0, 20.0}, Bar{40.0, 5.0}}},
       {"dfmpc", {Bar{800.0, 40.0}, Bar{700.0, 60.0}, Bar{900.0, 10.0}}},
       {"TD-MPC2 (published)", {Bar{819.0, 0.0}, Bar{876.0, 0.0}, std::nullopt}, true}}};
}

TEST_F(BarChartTest, WritesPngOfRequestedSizeInTheSeriesColours) {
  const fs::path path = dir_ / "returns.png";
  WriteBarChartPng(path, Returns(), 800, 400);
  const Image image = Decode(path);
  EXPECT_EQ(image.width, 800);
  EXPECT_EQ(image.height, 400);
  EXPECT_GT(PixelsNear(image, {255, 255, 255}), image.pixels.size() / 3);
  for (std::size_t s = 0; s < 2; ++s) {  // the solid ones
    EXPECT_GT(PixelsNear(image, SeriesColor(s)), 100u) << "series " << s;
  }
  EXPECT_EQ(Entries(), std::vector<fs::path>{path});
}

TEST_F(BarChartTest, BarsGrowWithTheirValueAndMissingBarsLeaveAGap) {
  const fs::path full = dir_ / "full.png", half = dir_ / "half.png", gap = dir_ / "gap.png";
  BarChart chart = Returns();
  WriteBarChartPng(full, chart);
  for (auto& bar : chart.series[1].bars) bar->value /= 2.0;
  WriteBarChartPng(half, chart);
  chart.series[1].bars[0] = std::nullopt;
  WriteBarChartPng(gap, chart);
  const std::size_t full_pixels = PixelsNear(Decode(full), SeriesColor(1));
  const std::size_t half_pixels = PixelsNear(Decode(half), SeriesColor(1));
  // Half the bar area, plus the legend sample both have.
  EXPECT_LT(half_pixels, 0.7 * full_pixels);
  EXPECT_GT(half_pixels, 0.3 * full_pixels);
  EXPECT_LT(PixelsNear(Decode(gap), SeriesColor(1)), 0.8 * half_pixels);
}

TEST_F(BarChartTest, HatchedBarsAreNotSolid) {
  const fs::path hatched = dir_ / "hatched.png", solid = dir_ / "solid.png";
  BarChart chart = Returns();
  WriteBarChartPng(hatched, chart);
  chart.series[2].hatched = false;
  WriteBarChartPng(solid, chart);
  // Thin anti-aliased hatching, so hardly a pixel of the pure colour.
  EXPECT_GT(PixelsNear(Decode(solid), SeriesColor(2)), 1000u);
  EXPECT_LT(PixelsNear(Decode(hatched), SeriesColor(2)), 100u);
}

TEST_F(BarChartTest, TextIsQuotedForGnuplot) {
  const std::string text = "it's \"quoted\" $x #1 \\n @^_{} 'end";
  BarChart chart = Returns();
  chart.title = chart.y_label = chart.categories[0] = chart.series[0].label = text;
  const fs::path path = dir_ / "it's a \"chart\" $1.png";
  WriteBarChartPng(path, chart);
  EXPECT_EQ(Decode(path).width, 1000);
  EXPECT_EQ(Entries(), std::vector<fs::path>{path});
}

TEST_F(BarChartTest, RejectsBadInputAndLeavesNoFile) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    BarChart chart;
    int width = 1000, height = 500;
  };
  std::vector<Case> cases(12, Case{"", Returns()});
  cases[0].name = "no categories";
  cases[0].chart.categories.clear();
  cases[1].name = "no series";
  cases[1].chart.series.clear();
  cases[2].name = "a bar short";
  cases[2].chart.series[0].bars.pop_back();
  cases[3].name = "no bars";
  cases[3].chart.series[2].bars.assign(3, std::nullopt);
  cases[4].name = "nan value";
  cases[4].chart.series[0].bars[1]->value = nan;
  cases[5].name = "nan error";
  cases[5].chart.series[0].bars[1]->error = nan;
  cases[6].name = "negative error";
  cases[6].chart.series[0].bars[1]->error = -1.0;
  cases[7].name = "empty y range";
  cases[7].chart.y_max = cases[7].chart.y_min;
  cases[8].name = "newline in category";
  cases[8].chart.categories[2] = "a\nb";
  cases[9].name = "newline in label";
  cases[9].chart.series[1].label = "a\nb";
  cases[10].name = "narrow";
  cases[10].width = 50;
  cases[11].name = "flat";
  cases[11].height = 10;
  const fs::path path = dir_ / "bad.png";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THROW(WriteBarChartPng(path, c.chart, c.width, c.height), std::invalid_argument);
    EXPECT_TRUE(Entries().empty());
  }
}

}  // namespace
}  // namespace dfmpc::plot
