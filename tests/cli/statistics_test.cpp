#include "statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace dfmpc::cli {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(StatisticsTest, NoValuesGiveNaN) {
  EXPECT_TRUE(std::isnan(Percentile({}, 50)));
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST(StatisticsTest, OneValueIsEveryPercentile) {
  for (double p : {0.0, 1.0, 50.0, 99.0, 100.0}) EXPECT_EQ(Percentile({4.5}, p), 4.5) << p;
}

TEST(StatisticsTest, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(Median({3.0, 1.0, 2.0}), 2.0);
}

TEST(StatisticsTest, InterpolatesLinearlyBetweenRanks) {
  const std::vector<double> values{10.0, 40.0, 20.0, 30.0, 0.0};  // sorted: 0 10 20 30 40
  EXPECT_EQ(Percentile(values, 0), 0.0);
  EXPECT_EQ(Percentile(values, 100), 40.0);
  EXPECT_EQ(Percentile(values, 25), 10.0);
  EXPECT_DOUBLE_EQ(Percentile(values, 90), 36.0);
  EXPECT_DOUBLE_EQ(Percentile(values, 99), 39.6);
}

TEST(StatisticsTest, NaNValuesGiveNaNAndInfinitiesRank) {
  EXPECT_TRUE(std::isnan(Percentile({1.0, kNaN, 3.0}, 0)));
  EXPECT_TRUE(std::isnan(Median({kNaN})));
  EXPECT_EQ(Percentile({1.0, kInf, 3.0}, 100), kInf);
  EXPECT_EQ(Median({1.0, kInf, 3.0}), 3.0);
  EXPECT_EQ(Percentile({-kInf, 1.0, 3.0}, 0), -kInf);
}

TEST(StatisticsTest, PercentileOutsideZeroToHundredIsAnError) {
  EXPECT_THROW(Percentile({1.0}, -1), std::invalid_argument);
  EXPECT_THROW(Percentile({1.0}, 100.5), std::invalid_argument);
  EXPECT_THROW(Percentile({1.0}, kNaN), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::cli
