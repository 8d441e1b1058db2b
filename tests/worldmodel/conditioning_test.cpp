// Conditioning the sampler on known features (inpainting).
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/sampler.h"
#include "agreement_cases.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyModel;

constexpr int kTokenDim = 5;

// Same bound as sampler_test.cpp: fp32 over up to K + H - 1 = 17 chained
// model calls, where the cached and uncached runs differ only in how matrix
// products are split and summed. Conditioning adds identical elementwise
// work in both modes (the same noise, imposed on all H tokens), so it must
// not widen the gap; real mismatches change outputs by 1e-2 or more.
constexpr double kAgreementTolerance = 1e-5;

// Known: the first feature of every token and the whole middle token. With
// more than one candidate the mask is per candidate, and the last candidate
// also knows the second feature of the last token.
KnownFeatures MakeKnown(int64_t batch, int64_t horizon, uint64_t seed = 13) {
  torch::manual_seed(seed);
  auto mask = torch::zeros({horizon, kTokenDim}, torch::kBool);
  mask.select(1, 0).fill_(true);
  mask[horizon / 2].fill_(true);
  if (batch > 1) {
    mask = mask.repeat({batch, 1, 1});
    mask[batch - 1][horizon - 1][1] = true;
  }
  return KnownFeatures{mask, torch::randn({batch, horizon, kTokenDim})};
}

// Largest |tokens - values| over the known features.
double KnownError(const at::Tensor& tokens, const KnownFeatures& known) {
  return torch::where(known.mask, tokens - known.values, torch::zeros({}))
      .abs()
      .max()
      .item<double>();
}

// Largest |a - b| over the features that are not known.
double UnknownDifference(const at::Tensor& a, const at::Tensor& b, const KnownFeatures& known) {
  return torch::where(known.mask, torch::zeros({}), a - b).abs().max().item<double>();
}

using testing::AgreementCase;

class ConditioningAgreementTest : public ::testing::TestWithParam<AgreementCase> {};

TEST_P(ConditioningAgreementTest, ExactCacheMatchesNoCacheAndKeepsKnownValues) {
  const auto [kind, num_context, levels, horizon, batch] = GetParam();
  DfTransformer model = TinyModel(kTokenDim);
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  torch::manual_seed(3);
  const auto context = torch::randn({1, num_context, kTokenDim});
  const KnownFeatures known = MakeKnown(batch, horizon);

  SampleOptions options;
  options.schedule = kind;
  options.num_levels = levels;
  options.horizon = horizon;
  options.seed = 11;
  options.cache_mode = CacheMode::kNone;
  const SampleResult none = sampler.Generate(context, batch, options, nullptr, &known);
  options.cache_mode = CacheMode::kExact;
  const SampleResult exact = sampler.Generate(context, batch, options, nullptr, &known);

  ASSERT_EQ(none.tokens.sizes(), exact.tokens.sizes());
  EXPECT_LT((none.tokens - exact.tokens).abs().max().item<double>(), kAgreementTolerance);
  EXPECT_EQ(KnownError(none.tokens, known), 0.0);
  EXPECT_EQ(KnownError(exact.tokens, known), 0.0);
  EXPECT_TRUE(torch::isfinite(exact.tokens).all().item<bool>());
  EXPECT_LE(exact.stats.token_forwards, none.stats.token_forwards);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, ConditioningAgreementTest,
                         ::testing::Combine(testing::kAllScheduleKinds, ::testing::Values(0, 17),
                                            ::testing::Values(1, 4, 10), ::testing::Values(1, 8),
                                            ::testing::Values(1, 3)),
                         testing::AgreementCaseName);

// Shared by the conditioning tests below: a tiny model sampled with K = 4.
class ConditioningTest : public ::testing::Test {
 protected:
  ConditioningTest() : model_(TinyModel(kTokenDim)), sampler_(*model_, schedule_) {
    options_.num_levels = 4;
  }

  DfTransformer model_;
  NoiseSchedule schedule_;
  Sampler sampler_;
  SampleOptions options_;
};

// The agreement above would be vacuous if the known features did not reach
// the model. With eta = 0 the only random numbers that unknown features see
// are the initial tokens, which conditioning does not change, so any
// difference comes from conditioning itself.
TEST_F(ConditioningTest, KnownFeaturesChangeTheUnknownOnes) {
  const auto context = torch::randn({1, 6, kTokenDim});
  const KnownFeatures known = MakeKnown(1, options_.horizon);
  const auto free = sampler_.Generate(context, 1, options_).tokens;
  const auto conditioned = sampler_.Generate(context, 1, options_, nullptr, &known).tokens;
  EXPECT_GT(UnknownDifference(free, conditioned, known), 100 * kAgreementTolerance);

  const KnownFeatures shifted{known.mask, known.values + 1.0};
  const auto moved = sampler_.Generate(context, 1, options_, nullptr, &shifted).tokens;
  EXPECT_GT(UnknownDifference(conditioned, moved, known), 100 * kAgreementTolerance);
}

// An all-false mask draws the imposition noise but changes nothing else.
TEST_F(ConditioningTest, EmptyMaskLeavesDeterministicSamplesUnchanged) {
  const auto context = torch::randn({1, 6, kTokenDim});
  const KnownFeatures nothing{torch::zeros({options_.horizon, kTokenDim}, torch::kBool),
                              torch::randn({1, options_.horizon, kTokenDim})};
  EXPECT_TRUE(torch::equal(sampler_.Generate(context, 2, options_).tokens,
                           sampler_.Generate(context, 2, options_, nullptr, &nothing).tokens));
}

TEST_F(ConditioningTest, StochasticDdimAgreesAcrossModesAndSeedsReproduce) {
  const auto context = torch::randn({3, 6, kTokenDim});
  options_.eta = 1.0;
  options_.seed = 5;
  const KnownFeatures known = MakeKnown(3, options_.horizon);
  options_.cache_mode = CacheMode::kNone;
  const auto none = sampler_.Generate(context, 3, options_, nullptr, &known).tokens;
  options_.cache_mode = CacheMode::kExact;
  KvCacheOptions cache_options = model_->CacheOptions();
  cache_options.capacity = 6;
  cache_options.persistent_batch = 3;
  cache_options.scratch_capacity = options_.horizon;
  cache_options.scratch_batch = 3;
  KvCache cache(cache_options);
  const auto exact = sampler_.Generate(context, 3, options_, &cache, &known).tokens;
  EXPECT_LT((none - exact).abs().max().item<double>(), kAgreementTolerance);
  EXPECT_EQ(KnownError(exact, known), 0.0);
  EXPECT_TRUE(torch::equal(exact, sampler_.Generate(context, 3, options_, nullptr, &known).tokens));
  options_.seed = 6;
  EXPECT_FALSE(
      torch::allclose(exact, sampler_.Generate(context, 3, options_, nullptr, &known).tokens));
}

// Values where the mask is false are ignored, NaN included.
TEST_F(ConditioningTest, ValuesOutsideTheMaskAreIgnored) {
  const auto context = torch::randn({1, 6, kTokenDim});
  const KnownFeatures known = MakeKnown(1, options_.horizon);
  const KnownFeatures with_nan{known.mask,
                               torch::where(known.mask, known.values, torch::full({}, NAN))};
  EXPECT_TRUE(torch::equal(sampler_.Generate(context, 1, options_, nullptr, &known).tokens,
                           sampler_.Generate(context, 1, options_, nullptr, &with_nan).tokens));
}

TEST_F(ConditioningTest, BadKnownFeaturesThrowClearly) {
  const auto context = torch::randn({1, 4, kTokenDim});
  const int64_t h = options_.horizon;
  const auto mask = torch::ones({h, kTokenDim}, torch::kBool);
  const auto values = torch::randn({1, h, kTokenDim});
  auto expect_invalid = [&](const KnownFeatures& known, int64_t batch) {
    for (CacheMode mode : {CacheMode::kNone, CacheMode::kExact}) {
      options_.cache_mode = mode;
      EXPECT_THROW(sampler_.Generate(context, batch, options_, nullptr, &known),
                   std::invalid_argument);
    }
  };
  expect_invalid({at::Tensor(), values}, 1);                                  // no mask
  expect_invalid({torch::ones({h + 1, kTokenDim}, torch::kBool), values}, 1);  // mask H
  expect_invalid({torch::ones({h, kTokenDim + 1}, torch::kBool), values}, 1);  // mask d
  expect_invalid({torch::ones({2, h, kTokenDim}, torch::kBool), values}, 3);   // mask B
  expect_invalid({torch::ones({h}, torch::kBool), values}, 1);                 // mask rank
  expect_invalid({torch::ones({h, kTokenDim}), values}, 1);                    // mask float
  expect_invalid({mask, at::Tensor()}, 1);                                    // no values
  expect_invalid({mask, torch::randn({h, kTokenDim})}, 1);                    // values rank
  expect_invalid({mask, torch::randn({2, h, kTokenDim})}, 3);                 // values B
  expect_invalid({mask, torch::randn({1, h - 1, kTokenDim})}, 1);             // values H
  expect_invalid({mask, torch::ones({1, h, kTokenDim}, torch::kLong)}, 1);    // values int
  auto nan_values = values.clone();
  nan_values[0][2][3] = NAN;
  expect_invalid({mask, nan_values}, 1);
  auto inf_values = values.clone();
  inf_values[0][0][0] = INFINITY;
  expect_invalid({mask, inf_values}, 1);

  try {
    options_.cache_mode = CacheMode::kExact;
    const KnownFeatures wrong{torch::ones({h, kTokenDim + 1}, torch::kBool), values};
    sampler_.Generate(context, 1, options_, nullptr, &wrong);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("known mask"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
