// The noise scale: plans drawn from noise of a smaller standard deviation
// (low-temperature sampling) carry less of the data's exploration noise, so
// the executed actions chatter less without a window's mean.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>

#include "dfmpc/planner/planner.h"
#include "plan_denoiser.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

TEST(NoiseScaleTest, ScalesTheStandardNormalDrawnFromTheSameGenerator) {
  at::Generator plain = at::detail::createCPUGenerator(7);
  at::Generator scaled = at::detail::createCPUGenerator(7);
  const at::Tensor unit = PlanNoise(plain, {3, 5, 4}, at::kCPU, {});
  const at::Tensor small = PlanNoise(scaled, {3, 5, 4}, at::kCPU, {0.25, 3});
  EXPECT_TRUE(at::equal(small, unit * 0.25));
  // The generator advanced alike: the next draws match again.
  EXPECT_TRUE(at::equal(PlanNoise(plain, {2}, at::kCPU, {}), PlanNoise(scaled, {2}, at::kCPU, {})));
}

TEST(NoiseScaleTest, ScalesOnlyTheNarrowCandidates) {
  at::Generator plain = at::detail::createCPUGenerator(11);
  at::Generator mixed = at::detail::createCPUGenerator(11);
  const at::Tensor unit = PlanNoise(plain, {4, 5, 3}, at::kCPU, {});
  const at::Tensor noise = PlanNoise(mixed, {4, 5, 3}, at::kCPU, {0.3, 1});
  EXPECT_TRUE(at::equal(noise.narrow(0, 0, 1), unit.narrow(0, 0, 1) * 0.3));
  EXPECT_TRUE(at::equal(noise.narrow(0, 1, 3), unit.narrow(0, 1, 3)));
}

TEST(NoiseScaleTest, ImpossibleScalesAreRefused) {
  PlannerOptions options = Small(PlanMode::kWarm);
  for (double scale : {0.0, -0.5, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
    options.noise_scale = scale;
    EXPECT_THROW(options.Validate(), std::invalid_argument) << scale;
  }
  options.noise_scale = 0.3;
  EXPECT_NO_THROW(options.Validate());
  for (double share : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    options.noise_scale_share = share;
    EXPECT_THROW(options.Validate(), std::invalid_argument) << share;
  }
  options.noise_scale_share = 0.5;
  EXPECT_NO_THROW(options.Validate());
}

TEST(NoiseScaleTest, ALowerScaleLowersTheChatterOfTheExecutedActions) {
#if defined(__SANITIZE_ADDRESS__)
  // Numbers, not memory: 400 steps at the tuned options; the code path is
  // every planner test's.
  GTEST_SKIP() << "checked in the Release build";
#endif
  // The pendulum's tuned options without the window and gain that smooth
  // and amplify its executed actions: the plan's first action alone.
  PlannerOptions options = TunedPlannerOptions(kPendulum);
  options.action_window = 1;
  options.action_gain = 1.0;
  options.action_gain_knee = 0.0;
  double change[2];
  const double scales[2] = {1.0, 0.2};
  for (int i = 0; i < 2; ++i) {
    options.noise_scale = scales[i];
    std::unique_ptr<Planner> planner = MakePlanner(options);
    change[i] = MeanActionChange(Drive(*planner, 200, /*seed=*/3));
  }
  EXPECT_LT(change[1], 0.7 * change[0]) << "scale 1: " << change[0] << ", 0.2: " << change[1];
  std::cout << "mean |da| at noise scale 1 " << change[0] << ", at 0.2 " << change[1] << "\n";
}

}  // namespace
}  // namespace dfmpc::planner
