// The inference-time memo of the timestep conditioning (src/
// conditioning_table.h): the transformer's output is the same with and
// without it, and it follows every change of the weights it memoizes.
#include "conditioning_table.h"

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_model.h"
#include "weight_signature.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyModel;

// With and without the memo the transformer runs the same fp32 operations;
// only the time MLP's rows are computed in batches of another size, which
// changes how a matrix product is blocked (1e-7 relative). The test checks
// below that a row of the wrong timestep moves the output far more.
constexpr double kTolerance = 1e-5;

// Forward with NoGradGuard: the memo is off outside InferenceMode.
at::Tensor Computed(DfTransformer& model, const at::Tensor& tokens, const at::Tensor& steps) {
  const torch::NoGradGuard no_grad;
  return model->Forward(tokens, steps, nullptr);
}

at::Tensor Memoized(DfTransformer& model, const at::Tensor& tokens, const at::Tensor& steps) {
  const c10::InferenceMode inference;
  return model->Forward(tokens, steps, nullptr).clone();
}

double MaxDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(ConditioningTableTest, MemoizedConditioningEqualsTheComputedOne) {
  DfTransformer model = TinyModel();
  const at::Tensor tokens = torch::randn({3, 6, 5});
  const at::Tensor per_token = torch::randint(-1, 1000, {3, 6}, torch::kLong);
  const at::Tensor shared = torch::tensor({-1, -1, 0, 17, 500, 999}, torch::kLong);
  for (const at::Tensor& steps : {per_token, shared, per_token}) {
    // The first call fills the memo; later ones read it, partly or wholly.
    const at::Tensor expected = Computed(model, tokens, steps);
    EXPECT_LE(MaxDifference(Memoized(model, tokens, steps), expected), kTolerance);
    EXPECT_LE(MaxDifference(Memoized(model, tokens, steps), expected), kTolerance);
  }
  // A neighbouring timestep's rows would be caught.
  const at::Tensor shifted = torch::tensor({-1, -1, 1, 18, 501, 999}, torch::kLong);
  EXPECT_GT(MaxDifference(Memoized(model, tokens, shifted), Computed(model, tokens, shared)),
            100 * kTolerance);
}

TEST(ConditioningTableTest, MemoFollowsInPlaceUpdatesOfEveryConditioningLayer) {
  DfTransformer model = TinyModel();
  const at::Tensor tokens = torch::randn({2, 5, 5});
  const at::Tensor steps = torch::tensor({-1, 3, 250, 700, 999}, torch::kLong);
  auto parameters = model->named_parameters();
  for (const std::string name : {"time_mlp.0.weight", "time_mlp.2.bias", "block1.modulation.weight",
                                 "final_modulation.bias"}) {
    SCOPED_TRACE(name);
    const at::Tensor before = Memoized(model, tokens, steps);
    {
      const torch::NoGradGuard no_grad;  // as an optimizer step does
      parameters[name].add_(0.05);
    }
    const at::Tensor after = Memoized(model, tokens, steps);
    EXPECT_GT(MaxDifference(after, before), 100 * kTolerance);
    EXPECT_LE(MaxDifference(after, Computed(model, tokens, steps)), kTolerance);
  }
}

TEST(ConditioningTableTest, ModelsMadeInInferenceModeRunWithoutTheMemo) {
  // Inference tensors have no version counter, so the memo cannot see an
  // update of them: such weights are used as they are on every call.
  const c10::InferenceMode inference;
  DfTransformer model = TinyModel();
  const at::Tensor tokens = torch::randn({1, 4, 5});
  const at::Tensor steps = torch::tensor({-1, 10, 20, 30}, torch::kLong);
  const at::Tensor before = model->Forward(tokens, steps, nullptr).clone();
  model->named_parameters()["final_modulation.bias"].add_(0.05);
  EXPECT_GT(MaxDifference(model->Forward(tokens, steps, nullptr), before), 100 * kTolerance);
}

// Rows of a stand-in conditioning: (step, 10 * step + weight's sum).
at::Tensor RowsOf(const at::Tensor& steps, const at::Tensor& weight) {
  const at::Tensor step = steps.to(at::kFloat).unsqueeze(1);
  return torch::cat({step, 10 * step + weight.sum()}, 1);
}

TEST(ConditioningTableTest, ComputesEachStepOnceUntilAWeightChanges) {
  const at::Tensor weight = torch::zeros({3});
  const std::vector<at::Tensor> weights = {weight};
  std::vector<std::vector<int64_t>> computed;
  auto compute = [&](const at::Tensor& steps) {
    computed.emplace_back(steps.data_ptr<int64_t>(), steps.data_ptr<int64_t>() + steps.numel());
    return RowsOf(steps, weight);
  };
  ConditioningTable table;
  const c10::InferenceMode inference;
  ASSERT_TRUE(MemoizableNow(weights));
  const std::vector<int64_t> first = {5, 5, 7}, second = {7, 9, 5};
  EXPECT_TRUE(
      torch::equal(table.Gather(first, weights, compute), RowsOf(torch::tensor(first), weight)));
  EXPECT_TRUE(
      torch::equal(table.Gather(second, weights, compute), RowsOf(torch::tensor(second), weight)));
  EXPECT_EQ(computed, (std::vector<std::vector<int64_t>>{{5, 7}, {9}}));
  const int64_t generation = table.generation();

  {
    const c10::InferenceMode off(false);
    const torch::NoGradGuard no_grad;
    weight.add_(1);  // a new version: every row is stale
  }
  EXPECT_TRUE(
      torch::equal(table.Gather(second, weights, compute), RowsOf(torch::tensor(second), weight)));
  EXPECT_EQ(computed.back(), (std::vector<int64_t>{7, 9, 5}));
  EXPECT_GT(table.generation(), generation);

  // A failed computation leaves the table as it was.
  auto failing = [](const at::Tensor&) -> at::Tensor { throw std::runtime_error("no rows"); };
  EXPECT_THROW(table.Gather({11}, weights, failing), std::runtime_error);
  EXPECT_TRUE(torch::equal(table.Gather({11, 9}, weights, compute),
                           RowsOf(torch::tensor({int64_t{11}, int64_t{9}}), weight)));
  EXPECT_EQ(computed.back(), (std::vector<int64_t>{11}));
}

TEST(ConditioningTableTest, OnlyInferenceModeWithOrdinaryWeightsMemoizes) {
  const std::vector<at::Tensor> weights = {torch::zeros({2})};
  EXPECT_FALSE(MemoizableNow(weights));
  {
    const torch::NoGradGuard no_grad;
    EXPECT_FALSE(MemoizableNow(weights));
  }
  const c10::InferenceMode inference;
  EXPECT_TRUE(MemoizableNow(weights));
  EXPECT_FALSE(MemoizableNow({torch::zeros({2})}));  // an inference tensor
}

TEST(ConditioningTableTest, TimestepsOutOfRangeThrowWithTheMemoToo) {
  DfTransformer model = TinyModel();
  const c10::InferenceMode inference;
  for (int64_t bad : {-2, 1000}) {
    EXPECT_THROW(model->Forward(torch::randn({1, 2, 5}), torch::tensor({int64_t{0}, bad}), nullptr),
                 std::out_of_range);
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
