// The one-pass modulated norm against ATen's two operators it replaces at
// inference, on the modulation layouts the model makes.
#include "modulated_norm.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <string>

#include "dfmpc/worldmodel/aten_kernels.h"

namespace dfmpc::worldmodel {
namespace {

torch::nn::LayerNorm Norm(int64_t width) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).elementwise_affine(false));
}

at::Tensor AtenForm(torch::nn::LayerNorm& norm, const at::Tensor& x, const at::Tensor& shift,
                    const at::Tensor& scale) {
  return at::addcmul(shift, norm(x), scale);
}

// Both compute the mean and variance in float, summing in a different order:
// for rows of unit scale the normalized values agree to a few float
// roundings (~1e-6), far below the 1e-4 a wrong variance, epsilon or a
// modulation row of another token would exceed.
TEST(ModulatedNormTest, MatchesATensFormOnEveryLayoutTheModelMakes) {
  const c10::InferenceMode inference;
  at::manual_seed(9);
  for (int64_t width : {8, 13, 96}) {
    for (int64_t modulation_batch : {1, 6}) {
      torch::nn::LayerNorm norm = Norm(width);
      const at::Tensor x = at::randn({6, 5, width}) * 3 + 1;
      // Narrowed views of a wider row, as the model's modulation is.
      const at::Tensor modulation = at::randn({modulation_batch, 5, 3 * width});
      const at::Tensor shift = modulation.narrow(2, 0, width);
      const at::Tensor scale = modulation.narrow(2, 2 * width, width);
      const std::string name =
          "width " + std::to_string(width) + ", batch " + std::to_string(modulation_batch);
      const at::Tensor fused = ModulatedNorm(norm, x, shift, scale);
      const at::Tensor aten = AtenForm(norm, x, shift, scale);
      ASSERT_EQ(fused.sizes(), aten.sizes()) << name;
      EXPECT_LT((fused - aten).abs().max().item<double>(), 1e-5) << name;
    }
  }
}

TEST(ModulatedNormTest, TheSwitchAndAutogradKeepATensForm) {
  at::manual_seed(10);
  torch::nn::LayerNorm norm = Norm(16);
  const at::Tensor x = at::randn({2, 3, 16});
  const at::Tensor shift = at::randn({1, 3, 16}), scale = at::randn({1, 3, 16});
  {
    const c10::InferenceMode inference;
    const AtenKernels aten(true);
    EXPECT_TRUE(ModulatedNorm(norm, x, shift, scale).equal(AtenForm(norm, x, shift, scale)));
  }
  const at::Tensor tracked = x.clone().requires_grad_();
  const at::Tensor out = ModulatedNorm(norm, tracked, shift, scale);
  ASSERT_TRUE(out.requires_grad());
  out.sum().backward();
  EXPECT_TRUE(tracked.grad().defined());
}

}  // namespace
}  // namespace dfmpc::worldmodel
