// The one-pass CPU rotary embedding against ATen's elementwise form it
// replaces at inference, on the layouts the model makes.
#include "fused_rotary.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attention.h"
#include "dfmpc/worldmodel/aten_kernels.h"

namespace dfmpc::worldmodel {
namespace {

at::Tensor AtenForm(const at::Tensor& x, const RotaryAngles& angles) {
  const AtenKernels aten(true);
  EXPECT_FALSE(FusedRotaryApplies(x, angles));
  return ApplyRotary(x, angles);
}

// Both forms round the two products and their sum; a compiler that fuses a
// product into the sum (an FMA) skips one rounding, so they may differ by
// a few units in the last place of the larger product, never more.
void ExpectSameRotation(const at::Tensor& x, const RotaryAngles& angles, const std::string& name) {
  ASSERT_TRUE(FusedRotaryApplies(x, angles)) << name;
  const at::Tensor fused = ApplyRotary(x, angles), aten = AtenForm(x, angles);
  ASSERT_EQ(fused.sizes(), x.sizes()) << name;
  EXPECT_TRUE(fused.is_contiguous()) << name;
  const at::Tensor products =
      (x * angles.cos).abs() + (x.roll(x.size(-1) / 2, -1) * angles.sin).abs();
  const at::Tensor excess = (fused - aten).abs() - products * std::ldexp(1.0, -22);
  EXPECT_LE(excess.max().item<double>(), 0.0) << name;
}

// The window's stacked queries and keys: a permuted view of the q, k, v
// projection, rotated by MakeWindowAngles' [2, 1, 1, w, hd] tables; a
// further query set, one [B, heads, w, hd] slice, by MakeRotaryAngles'
// [w, hd] tables at shifted positions.
TEST(FusedRotaryTest, MatchesAtensFormOnTheModelsLayouts) {
  c10::InferenceMode inference;
  at::manual_seed(3);
  for (int64_t head_dim : {8, 24, 64}) {
    const at::Tensor frequencies = RotaryFrequencies(static_cast<int>(head_dim));
    for (int64_t window : {1, 5, 33}) {
      const std::string name = "hd " + std::to_string(head_dim) + " w " + std::to_string(window);
      const int64_t batch = 8, heads = 4;
      const at::Tensor qkv =
          at::randn({batch, window, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
      const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
      ExpectSameRotation(qkv.narrow(0, 0, 2),
                         MakeWindowAngles(frequencies, 40, window, scale, at::kFloat), name);
      ExpectSameRotation(qkv[0], MakeRotaryAngles(frequencies, 1000, window, at::kFloat, scale),
                         name + " query set");
    }
  }
}

TEST(FusedRotaryTest, TheResultDoesNotDependOnTheThreadCount) {
  c10::InferenceMode inference;
  at::manual_seed(5);
  // Rows enough for parallel_for to split them.
  const at::Tensor x = at::randn({64, 4, 128, 24});
  const RotaryAngles angles = MakeRotaryAngles(RotaryFrequencies(24), 0, 128, at::kFloat);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = FusedRotary(x, angles);
  at::set_num_threads(2);
  const at::Tensor two = FusedRotary(x, angles);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
}

TEST(FusedRotaryTest, TrainingOtherTypesAndOtherShapesKeepAtensForm) {
  const RotaryAngles angles = MakeRotaryAngles(RotaryFrequencies(8), 0, 4, at::kFloat);
  const at::Tensor tracked = at::randn({2, 2, 4, 8}).requires_grad_();
  EXPECT_FALSE(FusedRotaryApplies(tracked, angles));
  EXPECT_TRUE(ApplyRotary(tracked, angles).requires_grad());  // the graph reaches x

  c10::InferenceMode inference;
  EXPECT_TRUE(FusedRotaryApplies(tracked.detach(), angles));
  EXPECT_FALSE(FusedRotaryApplies(tracked.detach().to(at::kDouble), angles));
  // Tables that broadcast x to a larger shape, and a last dimension that is
  // not contiguous.
  EXPECT_FALSE(FusedRotaryApplies(at::randn({2, 2, 1, 8}), angles));
  EXPECT_FALSE(FusedRotaryApplies(at::randn({2, 2, 8, 4}).transpose(2, 3), angles));
}

}  // namespace
}  // namespace dfmpc::worldmodel
