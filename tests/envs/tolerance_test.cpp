#include "dfmpc/task/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace dfmpc::task {
namespace {

TEST(ToleranceTest, IsOneInsideBounds) {
  EXPECT_EQ(Tolerance(0.5, 0.0, 1.0), 1.0);
  EXPECT_EQ(Tolerance(0.0, 0.0, 1.0, 2.0), 1.0);
  EXPECT_EQ(Tolerance(1.0, 0.0, 1.0, 2.0, Sigmoid::kLinear), 1.0);
}

TEST(ToleranceTest, WithoutMarginIsAnIndicator) {
  EXPECT_EQ(Tolerance(1.01, 0.0, 1.0), 0.0);
  EXPECT_EQ(Tolerance(-0.01, 0.0, 1.0), 0.0);
}

TEST(ToleranceTest, ReachesValueAtMarginForEverySigmoid) {
  for (Sigmoid s : {Sigmoid::kGaussian, Sigmoid::kHyperbolic, Sigmoid::kLongTail,
                    Sigmoid::kReciprocal, Sigmoid::kCosine, Sigmoid::kLinear,
                    Sigmoid::kQuadratic, Sigmoid::kTanhSquared}) {
    EXPECT_NEAR(Tolerance(3.0, 0.0, 1.0, 2.0, s, 0.1), 0.1, 1e-12) << static_cast<int>(s);
    EXPECT_NEAR(Tolerance(-2.0, 0.0, 1.0, 2.0, s, 0.1), 0.1, 1e-12) << static_cast<int>(s);
  }
}

TEST(ToleranceTest, MatchesDmControlValues) {
  // Gaussian: exp(-0.5 * (d * sqrt(-2 ln 0.1))^2) = 0.1^(d^2).
  EXPECT_NEAR(Tolerance(0.5, 0.0, 0.0, 1.0), std::pow(0.1, 0.25), 1e-12);
  // dm_control cartpole's small_control: quadratic with value 0 at margin 1.
  EXPECT_NEAR(Tolerance(0.5, 0.0, 0.0, 1.0, Sigmoid::kQuadratic, 0.0), 0.75, 1e-12);
  EXPECT_EQ(Tolerance(1.5, 0.0, 0.0, 1.0, Sigmoid::kQuadratic, 0.0), 0.0);
  EXPECT_NEAR(Tolerance(0.5, 0.0, 0.0, 1.0, Sigmoid::kLinear, 0.0), 0.5, 1e-12);
  EXPECT_EQ(Tolerance(2.0, 0.0, 0.0, 1.0, Sigmoid::kLinear, 0.0), 0.0);
}

TEST(ToleranceTest, RejectsBadArguments) {
  EXPECT_THROW(Tolerance(0.0, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(Tolerance(0.0, 0.0, 1.0, -1.0), std::invalid_argument);
  EXPECT_THROW(Tolerance(2.0, 0.0, 1.0, 1.0, Sigmoid::kGaussian, 0.0), std::invalid_argument);
  EXPECT_THROW(ParseSigmoid("sigmoidal"), std::invalid_argument);
  EXPECT_EQ(ParseSigmoid("quadratic"), Sigmoid::kQuadratic);
}

}  // namespace
}  // namespace dfmpc::task
