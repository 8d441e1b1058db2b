// Weights kept transposed for small CPU products (src/transposed_weights.h):
// the products equal the layers' own, the copies follow every change of the
// weights, and the transformer's output is the same with and without them.
#include "transposed_weights.h"

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <string>
#include <vector>

#include "tiny_model.h"
#include "weight_signature.h"

namespace dfmpc::worldmodel {
namespace {

// The same products summed by another kernel (OpenBLAS's small-matrix one
// against its packed one): float rounding, 1e-7 relative at these sizes.
constexpr double kTolerance = 1e-5;

double MaxDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(TransposedWeightsTest, ProductsThroughTheCopiesEqualTheLayers) {
  torch::manual_seed(0);
  for (const bool bias : {true, false}) {
    torch::nn::Linear layer(torch::nn::LinearOptions(96, 288).bias(bias));
    TransposedWeights memo({layer});
    const c10::InferenceMode inference;
    const at::Tensor x = torch::randn({2, 6, 96});
    const at::Tensor product = LinearThrough(layer, x, memo.Get(at::kFloat)[0]);
    EXPECT_EQ(product.sizes(), (std::vector<int64_t>{2, 6, 288}));
    EXPECT_LE(MaxDifference(product, layer(x)), kTolerance);
    // Without a copy it is the layer.
    EXPECT_TRUE(LinearThrough(layer, x, LinearCopy()).equal(layer(x)));
  }
}

TEST(TransposedWeightsTest, CopiesAreMadeOnceAndFollowInPlaceUpdates) {
  torch::nn::Linear layer(8, 4);
  TransposedWeights memo({layer});
  at::Tensor first, again, updated;
  {
    const c10::InferenceMode inference;
    ASSERT_TRUE(memo.Usable());
    first = memo.Get(at::kFloat)[0].weight;
    again = memo.Get(at::kFloat)[0].weight;
  }
  EXPECT_EQ(first.data_ptr(), again.data_ptr());  // not copied again
  EXPECT_TRUE(first.is_contiguous());
  EXPECT_TRUE(first.equal(layer->weight.t()));
  {
    const torch::NoGradGuard no_grad;  // as an optimizer step does
    layer->weight.mul_(2.0);
  }
  {
    const c10::InferenceMode inference;
    updated = memo.Get(at::kFloat)[0].weight;
  }
  EXPECT_TRUE(updated.equal(layer->weight.t()));
  EXPECT_FALSE(updated.equal(first));
}

// Calls of few and of many tokens, under InferenceMode (copies and the
// conditioning memo) and under a no-grad guard (neither): the same output,
// also after an in-place update of a block's MLP.
TEST(TransposedWeightsTest, TheTransformerGivesTheSameOutputWithAndWithoutTheCopies) {
  DfTransformer model = testing::TinyModel();
  auto parameters = model->named_parameters();
  for (const int64_t batch : {1, 4, 24}) {  // 6, 24 and 144 rows
    SCOPED_TRACE(batch);
    const at::Tensor tokens = torch::randn({batch, 6, 5});
    const at::Tensor steps = torch::randint(-1, 1000, {batch, 6}, torch::kLong);
    const auto computed = [&] {
      const torch::NoGradGuard no_grad;
      return model->Forward(tokens, steps, nullptr);
    };
    const auto memoized = [&] {
      const c10::InferenceMode inference;
      return model->Forward(tokens, steps, nullptr).clone();
    };
    EXPECT_LE(MaxDifference(memoized(), computed()), kTolerance);
    const at::Tensor before = memoized();
    {
      const torch::NoGradGuard no_grad;
      parameters["block1.fc1.weight"].add_(0.05);
    }
    const at::Tensor after = memoized();
    EXPECT_GT(MaxDifference(after, before), 100 * kTolerance);
    EXPECT_LE(MaxDifference(after, computed()), kTolerance);
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
