// bfloat16 products on the CPU (dfmpc/worldmodel/cpu_bf16.h): the switch is
// per thread and scoped, large calls change by bfloat16's rounding and no
// more, small calls and calls outside InferenceMode do not change at all,
// and the bfloat16 copies follow the weights.
#include "dfmpc/worldmodel/cpu_bf16.h"

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <thread>

#include "tiny_model.h"
#include "transposed_weights.h"

namespace dfmpc::worldmodel {
namespace {

double MaxDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

double RelativeRms(const at::Tensor& approximate, const at::Tensor& exact) {
  return ((approximate - exact).pow(2).mean() / exact.pow(2).mean()).sqrt().item<double>();
}

// Forward of `batch` windows of 6 tokens, under InferenceMode (where the
// copies apply) or a no-grad guard (where they do not), bf16 on or off.
at::Tensor Output(DfTransformer& model, int64_t batch, bool bf16, bool inference = true) {
  torch::manual_seed(batch);
  const at::Tensor tokens = torch::randn({batch, 6, 5});
  const at::Tensor steps = torch::randint(-1, 1000, {batch, 6}, torch::kLong);
  const CpuBf16Products products(bf16);
  if (!inference) {
    const torch::NoGradGuard no_grad;
    return model->Forward(tokens, steps, nullptr);
  }
  const c10::InferenceMode mode;
  return model->Forward(tokens, steps, nullptr).clone();
}

TEST(CpuBf16Test, TheSwitchIsScopedAndPerThread) {
  EXPECT_FALSE(CpuBf16Products::Active());
  {
    const CpuBf16Products on(true);
    EXPECT_TRUE(CpuBf16Products::Active());
    {
      const CpuBf16Products off(false);  // leaves it on
      EXPECT_TRUE(CpuBf16Products::Active());
    }
    EXPECT_TRUE(CpuBf16Products::Active());
    bool other_thread = true;
    std::thread([&other_thread] { other_thread = CpuBf16Products::Active(); }).join();
    EXPECT_FALSE(other_thread);
  }
  EXPECT_FALSE(CpuBf16Products::Active());
}

// 24 windows of 6 tokens (144 rows) take the bfloat16 products. The bound:
// bfloat16 keeps 8 significant bits, so each rounding of an input or a
// product is off by at most 2^-9 relative (0.2%); two blocks round about a
// dozen times on the way to the output, and independent errors add in
// quadrature, sqrt(12) 2^-9 = 0.7%, hence 1% relative RMS (measured: 0.05%).
// A product with a wrong layout, a missing bias or a lost activation is off
// by 100% or more. The output must also differ, or the products did not run
// in bfloat16.
TEST(CpuBf16Test, LargeCallsChangeByBf16RoundingOnly) {
  DfTransformer model = testing::TinyModel();
  const at::Tensor exact = Output(model, 24, false);
  const at::Tensor approximate = Output(model, 24, true);
  EXPECT_GT(MaxDifference(approximate, exact), 1e-4);
  EXPECT_LT(RelativeRms(approximate, exact), 0.01);
}

// Calls of at most 64 tokens (4 windows: 24 rows) keep float, and so does a
// forward outside InferenceMode (training, guidance).
TEST(CpuBf16Test, SmallCallsAndAutogradCallsStayFloat) {
  DfTransformer model = testing::TinyModel();
  EXPECT_TRUE(Output(model, 4, true).equal(Output(model, 4, false)));
  EXPECT_TRUE(Output(model, 24, true, false).equal(Output(model, 24, false, false)));
}

TEST(CpuBf16Test, Bf16CopiesFollowTheWeights) {
  torch::nn::Linear layer(8, 4);
  TransposedWeights memo({layer});
  at::Tensor first, updated, updated_aten;
  {
    const c10::InferenceMode inference;
    first = memo.Get(at::kBFloat16)[0].weight;
  }
  EXPECT_EQ(first.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(first.equal(layer->weight.t().to(at::kBFloat16)));
  {
    const torch::NoGradGuard no_grad;
    layer->bias.add_(1.0);
  }
  {
    const c10::InferenceMode inference;
    const LinearCopy copy = memo.Get(at::kBFloat16)[0];
    updated = copy.bias;
    updated_aten = copy.aten_bias;
    EXPECT_TRUE(copy.weight.equal(first));
  }
  EXPECT_TRUE(updated.equal(layer->bias));  // added in float
  EXPECT_TRUE(updated_aten.equal(layer->bias.to(at::kBFloat16)));
}

}  // namespace
}  // namespace dfmpc::worldmodel
