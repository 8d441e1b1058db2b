// The fused CPU attention against the batched matrix products it replaces
// at inference, on every layout of keys and values the model makes.
#include "fused_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention.h"

namespace dfmpc::worldmodel {
namespace {

struct Layout {
  int64_t batch, heads, window, head_dim;
  std::vector<int64_t> cached;  // tokens per cached segment
  bool shared;                  // cached segments of batch 1
  std::string Name() const {
    std::string name = "B" + std::to_string(batch) + " h" + std::to_string(heads) + " w" +
                       std::to_string(window) + " hd" + std::to_string(head_dim) + " cached";
    for (int64_t n : cached) name += " " + std::to_string(n);
    return name + (shared ? " shared" : " per batch");
  }
};

struct Call {
  std::vector<at::Tensor> queries;
  at::Tensor k, v, future;
  std::vector<CachedKeysValues> cached;
};

// Queries scaled by 1 / sqrt(head_dim) as the model's are; values a
// strided view as the model's (a slice of the fused q, k, v projection).
Call MakeCall(const Layout& layout, uint64_t seed) {
  at::manual_seed(seed);
  const int64_t b = layout.batch, h = layout.heads, w = layout.window, hd = layout.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Call call;
  call.queries = {at::randn({b, h, w, hd}) * scale, at::randn({b, h, w, hd}) * scale};
  call.k = at::randn({b, h, w, hd});
  call.v = at::randn({b, w, 3, h, hd}).permute({2, 0, 3, 1, 4})[2];
  call.future = FutureMask(w, call.k.options());
  const int64_t segment_batch = layout.shared ? 1 : b;
  for (size_t i = 0; i < layout.cached.size(); ++i) {
    const int64_t n = layout.cached[i];
    call.cached.push_back({at::randn({segment_batch, h, n, hd}),
                           at::randn({segment_batch, h, n, hd}), static_cast<int>(i % 2)});
  }
  return call;
}

at::Tensor Fused(const Call& call) {
  return FusedCausalAttention(call.queries, call.k, call.v, call.cached);
}

at::Tensor Batched(const Call& call) {
  return BatchedCausalAttention(call.queries, call.k, call.v, call.future, call.cached);
}

std::vector<Layout> Layouts() {
  std::vector<Layout> layouts;
  for (int64_t head_dim : {8, 24, 32, 64}) {
    for (int64_t window : {1, 5, 32, 33}) {
      layouts.push_back({8, 4, window, head_dim, {}, true});
      layouts.push_back({8, 4, window, head_dim, {7}, true});
      layouts.push_back({3, 2, window, head_dim, {16, 1}, false});
      layouts.push_back({1, 1, window, head_dim, {64, 9, 3}, true});
    }
  }
  return layouts;
}

// Both sum the same products in a different order: float rounding of
// scores of magnitude ~3 and outputs that average values of magnitude ~1
// stays orders of magnitude below 1e-5, the cache agreement's tolerance.
TEST(FusedAttentionTest, MatchesTheBatchedProductsOnEveryLayoutTheModelMakes) {
  c10::InferenceMode inference;
  double worst = 0.0;
  for (const Layout& layout : Layouts()) {
    const Call call = MakeCall(layout, 7);
    ASSERT_TRUE(FusedAttentionApplies(call.queries, call.k, call.v, call.cached)) << layout.Name();
    const at::Tensor fused = Fused(call), batched = Batched(call);
    ASSERT_EQ(fused.sizes(), batched.sizes()) << layout.Name();
    const double error = (fused - batched).abs().max().item<double>();
    EXPECT_LT(error, 1e-5) << layout.Name();
    worst = std::max(worst, error);
  }
  RecordProperty("worst_abs_difference", std::to_string(worst));
}

// Scores far apart (queries 30 times the model's scale: differences of
// hundreds, exponentials that underflow) still give the same mix: the
// softmax subtracts its row's maximum and its exponential saturates at the
// smallest normal float instead of overflowing or returning NaN. Scores of
// a hundred and more carry float rounding of 1e-5 and more (one ulp of 128
// is 1.5e-5), which the exponential turns into relative errors of the same size in the
// weights, and the two sum their products in different orders (and vector
// widths: AVX2 or AVX-512): hence 1e-4 here, where a wrong maximum, an
// overflow or a NaN errs by the values' magnitude, ~1.
TEST(FusedAttentionTest, ScoresFarApartStillMatch) {
  c10::InferenceMode inference;
  Call call = MakeCall({4, 2, 33, 24, {16}, true}, 29);
  for (at::Tensor& q : call.queries) q.mul_(30.0);
  const at::Tensor fused = Fused(call), batched = Batched(call);
  EXPECT_TRUE(fused.isfinite().all().item<bool>());
  EXPECT_LT((fused - batched).abs().max().item<double>(), 1e-4);
}

TEST(FusedAttentionTest, ATokenSeesNoLaterTokenOfItsWindow) {
  c10::InferenceMode inference;
  Call call = MakeCall({2, 2, 6, 8, {3}, true}, 11);
  const at::Tensor before = Fused(call);
  call.k.narrow(2, 4, 2).add_(5.0);  // the window's tokens 4 and 5
  call.v.narrow(2, 4, 2).add_(5.0);
  const at::Tensor after = Fused(call);
  EXPECT_TRUE(at::equal(before.narrow(2, 0, 4), after.narrow(2, 0, 4)));
  EXPECT_FALSE(at::allclose(before.narrow(2, 4, 2), after.narrow(2, 4, 2)));
}

TEST(FusedAttentionTest, TheResultDoesNotDependOnTheThreadCount) {
  c10::InferenceMode inference;
  const Call call = MakeCall({8, 4, 32, 24, {16}, true}, 13);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor one = Fused(call);
  at::set_num_threads(2);
  const at::Tensor two = Fused(call);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));
}

TEST(FusedAttentionTest, TrainingOtherTypesAndOddHeadSizesKeepTheBatchedProducts) {
  const Call call = MakeCall({2, 2, 4, 8, {3}, true}, 17);
  at::Tensor tracked = call.k.clone().requires_grad_();
  EXPECT_FALSE(FusedAttentionApplies(call.queries, tracked, call.v, call.cached));
  const at::Tensor out = CausalAttention(call.queries, tracked, call.v, call.future, call.cached);
  EXPECT_TRUE(out.requires_grad());  // the autograd graph reaches the keys

  std::vector<at::Tensor> doubles = {call.queries[0].to(at::kDouble)};
  EXPECT_FALSE(FusedAttentionApplies(doubles, call.k.to(at::kDouble), call.v.to(at::kDouble), {}));
  const Call odd = MakeCall({2, 2, 4, 12, {}, true}, 19);
  EXPECT_FALSE(FusedAttentionApplies(odd.queries, odd.k, odd.v, odd.cached));
  const Call wide = MakeCall({1, 1, 4, 72, {}, true}, 23);
  EXPECT_FALSE(FusedAttentionApplies(wide.queries, wide.k, wide.v, wide.cached));
}

}  // namespace
}  // namespace dfmpc::worldmodel
