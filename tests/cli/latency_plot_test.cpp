#include "latency_plot.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::cli {
namespace {

SummaryRow EvalRun(const std::string& task, const std::string& label, double mean, double p50,
               double p99) {
  SummaryRow row;
  row.task = task;
  row.label = label;
  row.return_mean = mean;
  row.latency_p50_ms = p50;
  row.latency_p99_ms = p99;
  return row;
}

TEST(LatencyPlotTest, APanelPerTaskAndASegmentPerRunFromP50ToP99) {
  SummaryRow random = EvalRun("pendulum", "random", 1.0, 0, 0);
  random.latency_p50_ms.reset();
  random.latency_p99_ms.reset();
  SummaryRow perturbed = EvalRun("pendulum", "exact", 100.0, 1, 2);
  perturbed.perturbation = "mass=1.5";
  const std::vector<plot::Panel> panels = ReturnAgainstLatencyPanels(
      {random, EvalRun("pendulum", "exact", 800.0, 7.0, 9.5), EvalRun("maze", "block 16/4", 760.0, 5, 9),
       perturbed, EvalRun("pendulum", "block 16/4", 805.0, 5.0, 9.0),
       EvalRun("pendulum", "exact", 810.0, 7.5, 10.0)});
  ASSERT_EQ(panels.size(), 2u);
  EXPECT_NE(panels[0].title.find("pendulum"), std::string::npos);
  ASSERT_EQ(panels[0].series.size(), 2u);  // no random: it has no latency
  // The rerun of "exact" replaced the first; the perturbed run is left out.
  EXPECT_EQ(panels[0].series[0].label, "exact");
  EXPECT_EQ(panels[0].series[0].x, (std::vector<double>{7.5, 10.0}));
  EXPECT_EQ(panels[0].series[0].y, (std::vector<double>{810.0, 810.0}));
  EXPECT_EQ(panels[0].series[1].label, "block 16/4");
  EXPECT_NE(panels[1].title.find("maze"), std::string::npos);
  ASSERT_EQ(panels[1].series.size(), 1u);
  EXPECT_EQ(panels[1].series[0].x, (std::vector<double>{5.0, 9.0}));
}

TEST(LatencyPlotTest, ASummaryWithoutLatencyIsAnError) {
  SummaryRow random = EvalRun("pendulum", "random", 1.0, 0, 0);
  random.latency_p99_ms.reset();
  EXPECT_THROW(ReturnAgainstLatencyPanels({random}), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::cli
