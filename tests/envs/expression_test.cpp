// Formulas in task files (dfmpc/task/expression.h): dm_control's
// tolerance() as a function, bulk evaluation equal to one point at a time,
// and every bad formula refused with where it is and why.
#include "dfmpc/task/expression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/task/tolerance.h"

namespace dfmpc::task {
namespace {

// The message `make` throws, or "" (with a failure) when it throws nothing.
template <typename Make>
std::string ErrorOf(Make make) {
  try {
    make();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

std::string ErrorOf(const std::string& text, const std::vector<std::string>& variables) {
  return ErrorOf([&] { Expression(text, variables, "arm/task.toml: cost[2].expression"); });
}

TEST(ExpressionTest, ToleranceIsTheRewardsToleranceForEverySigmoid) {
  const std::vector<std::string>& sigmoids = SigmoidNames();
  for (size_t s = 0; s < sigmoids.size(); ++s) {
    Expression formula("tolerance(x, -1, 2, 3, sigmoid." + sigmoids[s] + ", 0.2)", {"x"}, "test");
    for (double x = -10.0; x <= 12.0; x += 0.1) {
      EXPECT_NEAR(formula.Evaluate(&x), Tolerance(x, -1, 2, 3, static_cast<Sigmoid>(s), 0.2), 1e-12)
          << sigmoids[s] << " at " << x;
    }
  }
}

// dm_control's walker-walk reward: (3 standing + upright) / 4 x (5 move + 1)
// / 6, with standing = tolerance(height, 1.2, inf, 0.6), upright = (1 +
// torso_z) / 2 and move = tolerance(speed, 1, inf, 0.5, linear, 0). The
// sigmoids' names are qualified: a variable misspelt "cosine" must not read
// the sigmoid.
TEST(ExpressionTest, TheWalkersRewardIsWrittenAsDmControlWritesIt) {
  Expression reward(
      "standing = tolerance(height, 1.2, inf, 0.6, sigmoid.gaussian, 0.1),"
      "upright = (1 + torso_z) / 2,"
      "move = tolerance(speed, 1, inf, 0.5, sigmoid.linear, 0),"
      "(3 * standing + upright) / 4 * (5 * move + 1) / 6",
      {"height", "torso_z", "speed"}, "walker");
  // Height 0.9: 0.3 below the bound, half the margin: gaussian
  // exp(-0.5 (0.5 sqrt(-2 ln 0.1))^2) = 0.1^(1/4). Speed 0.75: half the
  // margin below, linear: 1 - 0.5 = 0.5. Upright at torso_z 0.6: 0.8.
  const double standing = std::pow(0.1, 0.25);
  const double expected = (3.0 * standing + 0.8) / 4.0 * (5.0 * 0.5 + 1.0) / 6.0;
  const double point[] = {0.9, 0.6, 0.75};
  EXPECT_NEAR(reward.Evaluate(point), expected, 1e-12);
  EXPECT_TRUE(reward.Reads(0));
}

// Many points in one call equal one point at a time, including the
// conditional, the named values and columns that grow between calls.
TEST(ExpressionTest, ColumnsEqualOnePointAtATime) {
  Expression formula("gap = (a - b) / 2, c > 0 ? max(-gap, 0.5 * gap) : sqrt(a^2 + b^2)",
                     {"a", "b", "c", "unused"}, "test");
  EXPECT_TRUE(formula.Reads(0));
  EXPECT_TRUE(formula.Reads(2));
  EXPECT_FALSE(formula.Reads(3));
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  for (const int count : {1, 5, 300, 17, 2000}) {
    formula.Reserve(count);
    std::vector<std::vector<double>> points(count, std::vector<double>(4));
    for (int j = 0; j < count; ++j) {
      for (int i = 0; i < 3; ++i) points[j][i] = formula.Column(i)[j] = value(random);
    }
    std::vector<double> results(count);
    formula.EvaluateColumns(count, results.data());
    for (int j = 0; j < count; ++j) {
      ASSERT_EQ(results[j], formula.Evaluate(points[j].data())) << count << " points, " << j;
    }
  }
}

TEST(ExpressionTest, BadFormulasAreNamedWithWhereAndWhy) {
  const std::vector<std::string> pendulum = {"cos", "sin", "velocity", "action.torque"};
  const std::string where = "arm/task.toml: cost[2].expression: ";
  EXPECT_EQ(ErrorOf("0.5 * velocty^2", pendulum),
            where +
                "unknown variable 'velocty' (did you mean 'velocity'?); the variables are "
                "cos, sin, velocity, action.torque");
  EXPECT_EQ(ErrorOf("tolerence(cos, 0, 1, 0, sigmoid.gaussian, 0.1)", pendulum),
            where + "unknown function 'tolerence'");
  EXPECT_EQ(ErrorOf("torque + vel", pendulum)
                .find(where + "unknown variable 'torque' (did you "
                              "mean 'action.torque'?)"),
            0u);
  EXPECT_NE(ErrorOf("tolerance(cos, 0, 1)", pendulum).find(where + "Too few parameters"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sin(cos, 2)", pendulum).find(where + "Too many parameters"),
            std::string::npos);
  EXPECT_NE(ErrorOf("cos +* 2", pendulum).find(where + "Unexpected operator \"*\""),
            std::string::npos);
  EXPECT_NE(ErrorOf("(cos", pendulum).find(where + "Missing parenthesis"), std::string::npos);
  EXPECT_EQ(ErrorOf(" \n ", pendulum), where + "the formula is empty");
  EXPECT_EQ(ErrorOf("cos = 2 * sin, cos", pendulum),
            where + "assigns to 'cos', which is a variable: name the value otherwise");
  EXPECT_EQ(ErrorOf("cosine", pendulum)
                .find(where + "unknown variable 'cosine' (did you mean "
                              "'cos'?)"),
            0u);
  EXPECT_EQ(ErrorOf("x", {"x", "inf"}), where + "'inf' names a constant of formulas; rename it");
  EXPECT_EQ(ErrorOf("x", {"x", "pole-angle"}).find(where + "'pole-angle' cannot be read"), 0u);
  EXPECT_EQ(ErrorOf("x", {"x", "x"}), where + "'x' names two variables");
}

TEST(ExpressionTest, AProbeRefusesWhatIsNotFiniteAndSaysWhy) {
  Expression log_speed("log(velocity)", {"cos", "velocity"}, "arm/task.toml: reward.expression");
  const double moving[] = {1.0, 2.0}, backwards[] = {1.0, -2.0};
  EXPECT_NEAR(log_speed.Probe(moving), std::log(2.0), 1e-15);
  EXPECT_EQ(ErrorOf([&] { log_speed.Probe(backwards); }),
            "arm/task.toml: reward.expression: gives nan at velocity = -2");
  Expression bad_margin("tolerance(x, 0, 1, 2, sigmoid.gaussian, 1.5)", {"x"},
                        "arm/task.toml: cost");
  const double outside = 3.0;
  EXPECT_NE(ErrorOf([&] {
              bad_margin.Probe(&outside);
            }).find("gives nan at x = 3 (tolerance: value_at_margin 1.5"),
            std::string::npos);
  Expression bad_sigmoid("tolerance(x, 0, 1, 2, 8, 0.1)", {"x"}, "arm/task.toml: cost");
  EXPECT_NE(ErrorOf([&] {
              bad_sigmoid.Probe(&outside);
            }).find("(tolerance: the sigmoid (argument 5) must be one of sigmoid.gaussian, "),
            std::string::npos);
  Expression division("1 / x", {"x"}, "arm/task.toml: cost");
  const double zero = 0.0;
  EXPECT_EQ(ErrorOf([&] { division.Probe(&zero); }), "arm/task.toml: cost: gives inf at x = 0");
}

}  // namespace
}  // namespace dfmpc::task
