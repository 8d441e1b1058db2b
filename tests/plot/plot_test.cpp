#include "plot/plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "plot_testing.h"

namespace dfmpc::plot {
namespace {

namespace fs = std::filesystem;

Series Line(std::string label, double slope, int points = 50) {
  Series series{std::move(label), {}, {}};
  for (int i = 0; i < points; ++i) {
    series.x.push_back(i);
    series.y.push_back(1.0 + slope * i);
  }
  return series;
}

Panel LossCurves() {
  Panel panel{"Training loss", "step", "loss", /*log_y=*/true, {}};
  Series train{"train", {}, {}}, validation{"validation", {}, {}};
  for (int step = 0; step <= 2000; step += 20) {
    train.x.push_back(step);
    train.y.push_back(2.0 * std::exp(-step / 300.0) + 1e-3);
    validation.x.push_back(step);
    validation.y.push_back(2.5 * std::exp(-step / 400.0) + 5e-3);
  }
  panel.series = {train, validation};
  return panel;
}

std::vector<Panel> Trajectory() {
  Panel angle{"Pendulum", "", "angle [rad]", false, {{"theta", {}, {}}}};
  Panel action{"", "time [s]", "torque", false, {{"action", {}, {}}}};
  for (int i = 0; i <= 200; ++i) {
    const double t = 0.02 * i;
    angle.series[0].x.push_back(t);
    angle.series[0].y.push_back(3.0 * std::exp(-t) * std::cos(4.0 * t));
    action.series[0].x.push_back(t);
    action.series[0].y.push_back(-std::sin(4.0 * t) * std::exp(-0.5 * t));
  }
  return {angle, action};
}

TEST_F(PlotTest, WritesPngOfRequestedSize) {
  const fs::path path = dir_ / "trajectory.png";
  WritePlotPng(path, Trajectory(), 640, 240);
  const Image image = Decode(path);
  EXPECT_EQ(image.width, 640);
  EXPECT_EQ(image.height, 2 * 240);
  EXPECT_EQ(Entries(), std::vector<fs::path>{path});
}

TEST_F(PlotTest, ShowsEverySeriesColourOnAWhiteBackground) {
  const fs::path path = dir_ / "horizon.png";
  Panel panel{"Error vs horizon", "horizon", "error", false,
              {Line("a", 0.1), Line("b", 0.2), Line("c", 0.3)}};
  WritePlotPng(path, {panel});
  const Image image = Decode(path);
  EXPECT_GT(DistinctColours(image), 20u);  // anti-aliased text and lines, not blank
  EXPECT_GT(PixelsNear(image, {255, 255, 255}), image.pixels.size() / 2);
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_GT(PixelsNear(image, SeriesColor(s)), 100u) << "series " << s;
  }
}

TEST(PlotPaletteTest, SeriesColoursAreDistinct) {
  for (std::size_t a = 0; a < 9; ++a) {
    for (std::size_t b = a + 1; b < 9; ++b) EXPECT_FALSE(SeriesColor(a) == SeriesColor(b));
  }
}

TEST_F(PlotTest, DrawsLogYLossCurvesAndTheScaleShowsInTheImage) {
  const fs::path log_path = dir_ / "log.png", linear_path = dir_ / "linear.png";
  Panel loss = LossCurves();
  WritePlotPng(log_path, {loss});
  loss.log_y = false;
  WritePlotPng(linear_path, {loss});
  const Image log_image = Decode(log_path);
  EXPECT_GT(PixelsNear(log_image, SeriesColor(0)), 100u);
  EXPECT_GT(PixelsNear(log_image, SeriesColor(1)), 100u);
  EXPECT_NE(log_image.pixels, Decode(linear_path).pixels);
}

TEST_F(PlotTest, DifferentDataGiveDifferentImages) {
  const fs::path first = dir_ / "first.png", second = dir_ / "second.png";
  WritePlotPng(first, {Panel{"", "x", "y", false, {Line("s", 0.5)}}});
  WritePlotPng(second, {Panel{"", "x", "y", false, {Line("s", -0.5)}}});
  EXPECT_NE(Decode(first).pixels, Decode(second).pixels);
}

TEST_F(PlotTest, DrawsASinglePointSeriesAsADot) {
  const fs::path path = dir_ / "dot.png";
  WritePlotPng(path, {Panel{"", "", "", false, {Line("one", 1.0, 1)}}});
  EXPECT_GT(PixelsNear(Decode(path), SeriesColor(0)), 20u);
}

TEST_F(PlotTest, MarkedPointsAddDotsToTheLine) {
  const fs::path plain = dir_ / "plain.png", marked = dir_ / "marked.png";
  Series segment = Line("segment", 0.0, 2);
  WritePlotPng(plain, {Panel{"", "", "", false, {segment}}});
  segment.mark_points = true;
  WritePlotPng(marked, {Panel{"", "", "", false, {segment}}});
  // The dots at both ends are wider than the line: more pixels of its colour.
  EXPECT_GT(PixelsNear(Decode(marked), SeriesColor(0)),
            PixelsNear(Decode(plain), SeriesColor(0)) + 20u);
}

TEST_F(PlotTest, TextAndPathAreQuotedForGnuplot) {
  const fs::path path = dir_ / "it's a \"plot\" $1 #2.png";
  const std::string text = "it's \"quoted\" $x #1 \\n @^_{} 'end";
  WritePlotPng(path, {Panel{text, text, text, false, {Line(text, 1.0)}}});
  EXPECT_EQ(Decode(path).width, 900);
  EXPECT_EQ(Entries(), std::vector<fs::path>{path});
}

TEST_F(PlotTest, ReplacesAnExistingFile) {
  const fs::path path = dir_ / "plot.png";
  std::ofstream(path) << "old content";
  WritePlotPng(path, Trajectory());
  EXPECT_EQ(Decode(path).height, 2 * 350);
  EXPECT_EQ(Entries(), std::vector<fs::path>{path});
}

TEST_F(PlotTest, RejectsBadInputAndLeavesNoFile) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Series good = Line("ok", 1.0);
  struct Case {
    const char* name;
    std::vector<Panel> panels;
    int width = 900, panel_height = 350;
  };
  const std::vector<Case> cases = {
      {"no panels", {}},
      {"no series", {Panel{}}},
      {"no points", {Panel{"", "", "", false, {Series{"empty", {}, {}}}}}},
      {"size mismatch", {Panel{"", "", "", false, {Series{"m", {1, 2, 3}, {1, 2}}}}}},
      {"nan y", {Panel{"", "", "", false, {Series{"n", {1, 2}, {1, nan}}}}}},
      {"inf x", {Panel{"", "", "", false, {Series{"i", {1, inf}, {1, 2}}}}}},
      {"zero on log y", {Panel{"", "", "", true, {Series{"z", {1, 2}, {1, 0}}}}}},
      {"negative on log y", {Panel{"", "", "", true, {Series{"z", {1, 2}, {1, -1}}}}}},
      {"newline in title", {Panel{"two\nlines", "", "", false, {good}}}},
      {"newline in label", {Panel{"", "", "", false, {Line("a\nb", 1.0)}}}},
      {"narrow", {Panel{"", "", "", false, {good}}}, 50, 350},
      {"flat", {Panel{"", "", "", false, {good}}}, 900, 10},
      {"too tall", std::vector<Panel>(40, Panel{"", "", "", false, {good}}), 900, 350},
  };
  const fs::path path = dir_ / "bad.png";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THROW(WritePlotPng(path, c.panels, c.width, c.panel_height), std::invalid_argument);
    EXPECT_TRUE(Entries().empty());
  }
}

TEST_F(PlotTest, MissingDirectoryThrowsAndLeavesNothing) {
  EXPECT_THROW(WritePlotPng(dir_ / "missing" / "plot.png", Trajectory()), std::runtime_error);
  EXPECT_TRUE(Entries().empty());
}

TEST_F(PlotTest, FailedRenameThrowsAndLeavesNoTemporaryFiles) {
  // A non-empty directory in the way: rendering succeeds, the rename fails.
  const fs::path path = dir_ / "plot.png";
  fs::create_directories(path / "inside");
  EXPECT_THROW(WritePlotPng(path, Trajectory()), std::runtime_error);
  EXPECT_EQ(Entries(), (std::vector<fs::path>{path, path / "inside"}));
}

// Runs WritePlotPng into an empty `out` directory with PATH set to `bin` and
// returns the std::runtime_error message it must throw.
std::string FailureWithPath(const fs::path& bin, const fs::path& out) {
  const std::string saved_path = std::getenv("PATH");
  setenv("PATH", bin.c_str(), 1);
  std::string message;
  try {
    WritePlotPng(out / "plot.png", Trajectory());
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    message = error.what();
  }
  setenv("PATH", saved_path.c_str(), 1);
  EXPECT_TRUE(fs::is_empty(out)) << "files left behind";
  return message;
}

TEST_F(PlotTest, MissingGnuplotThrowsAndLeavesNothing) {
  fs::create_directories(dir_ / "bin");  // empty: no gnuplot there
  fs::create_directories(dir_ / "out");
  EXPECT_NE(FailureWithPath(dir_ / "bin", dir_ / "out").find("gnuplot-nox"), std::string::npos);
}

TEST_F(PlotTest, FailingGnuplotThrowsWithItsOutputAndLeavesNothing) {
  fs::create_directories(dir_ / "bin");
  fs::create_directories(dir_ / "out");
  const fs::path fake = dir_ / "bin" / "gnuplot";
  std::ofstream(fake) << "#!/bin/sh\necho 'gnuplot says boom' >&2\nexit 3\n";
  fs::permissions(fake, fs::perms::owner_all);
  EXPECT_NE(FailureWithPath(dir_ / "bin", dir_ / "out").find("boom"), std::string::npos);
}

}  // namespace
}  // namespace dfmpc::plot
