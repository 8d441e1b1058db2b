#include "dfmpc/worldmodel/sampler.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "dfmpc/worldmodel/kv_cache.h"
#include "agreement_cases.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyModel;

// fp32, up to K + H - 1 = 17 chained model calls. Cached and uncached runs
// differ only in how matrix products are split and summed (~1e-7 relative
// per operation); the largest difference seen over all cases here is about
// 1.2e-6, so 1e-5 leaves a margin for other BLAS builds while still catching
// any real mismatch (a wrong position, level or mask changes outputs by
// 1e-2 or more; see GeneratedTokensDependOnContext).
constexpr double kAgreementTolerance = 1e-5;

using testing::AgreementCase;

class SamplerAgreementTest : public ::testing::TestWithParam<AgreementCase> {};

TEST_P(SamplerAgreementTest, ExactCacheMatchesNoCache) {
  const auto [kind, num_context, levels, horizon, batch] = GetParam();
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  torch::manual_seed(3);
  const auto context = torch::randn({1, num_context, 5});

  SampleOptions options;
  options.schedule = kind;
  options.num_levels = levels;
  options.horizon = horizon;
  options.seed = 11;
  options.cache_mode = CacheMode::kNone;
  const SampleResult none = sampler.Generate(context, batch, options);
  options.cache_mode = CacheMode::kExact;
  const SampleResult exact = sampler.Generate(context, batch, options);

  ASSERT_EQ(none.tokens.sizes(), exact.tokens.sizes());
  EXPECT_EQ(none.stats.calls, exact.stats.calls);
  const double diff = (none.tokens - exact.tokens).abs().max().item<double>();
  EXPECT_LT(diff, kAgreementTolerance);
  EXPECT_TRUE(torch::isfinite(exact.tokens).all().item<bool>());
  EXPECT_LE(exact.stats.token_forwards, none.stats.token_forwards);
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, SamplerAgreementTest,
                         ::testing::Combine(testing::kAllScheduleKinds, ::testing::Values(0, 1, 17),
                                            ::testing::Values(1, 4, 10), ::testing::Values(1, 8),
                                            ::testing::Values(1, 3)),
                         testing::AgreementCaseName);

// The agreement above would be vacuous if generated tokens ignored the
// context; make sure they do not.
TEST(SamplerTest, GeneratedTokensDependOnContext) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  torch::manual_seed(3);
  const auto context = torch::randn({1, 17, 5});
  SampleOptions options;
  options.num_levels = 4;
  const auto a = sampler.Generate(context, 1, options).tokens;
  const auto b = sampler.Generate(context + 1.0, 1, options).tokens;
  EXPECT_GT((a - b).abs().max().item<double>(), 100 * kAgreementTolerance);
}

TEST(SamplerTest, StochasticDdimAgreesAcrossModesAndSeedsReproduce) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  const auto context = torch::randn({3, 6, 5});
  SampleOptions options;
  options.num_levels = 4;
  options.eta = 1.0;
  options.seed = 5;
  options.cache_mode = CacheMode::kNone;
  const auto none = sampler.Generate(context, 3, options).tokens;
  options.cache_mode = CacheMode::kExact;
  const auto exact = sampler.Generate(context, 3, options).tokens;
  EXPECT_LT((none - exact).abs().max().item<double>(), kAgreementTolerance);
  EXPECT_TRUE(torch::equal(exact, sampler.Generate(context, 3, options).tokens));
  options.seed = 6;
  EXPECT_FALSE(torch::allclose(exact, sampler.Generate(context, 3, options).tokens));
}

TEST(SamplerTest, PyramidTokenForwardsFollowTheSchedule) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  for (int s : {0, 1, 17}) {
    for (int k : {1, 4, 10}) {
      for (int h : {1, 8}) {
        // Call m (0 <= m <= K + H - 2) sees tokens t at level
        // clip(K + t - m, 0, K). Tokens t <= m - K - 1 were clean in an earlier
        // call and are committed; tokens t > m stay at level K and are
        // skipped; so the window is [max(0, m - K), min(m, H - 1)]. The
        // context is encoded once.
        int64_t expected = s;
        for (int m = 0; m <= k + h - 2; ++m) {
          expected += std::min(m, h - 1) - std::max(0, m - k) + 1;
        }
        SampleOptions options;
        options.num_levels = k;
        options.horizon = h;
        const auto context = torch::randn({1, s, 5});
        const SampleStats exact = sampler.Generate(context, 2, options).stats;
        EXPECT_EQ(exact.calls, k + h - 1);
        EXPECT_EQ(exact.token_forwards, expected) << "S=" << s << " K=" << k << " H=" << h;
        options.cache_mode = CacheMode::kNone;
        const SampleStats none = sampler.Generate(context, 2, options).stats;
        EXPECT_EQ(none.token_forwards, static_cast<int64_t>(k + h - 1) * (s + h));
      }
    }
  }
}

TEST(SamplerTest, SharedContextCacheIsLeftHoldingTheContext) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  KvCacheOptions cache_options = model->CacheOptions();
  cache_options.capacity = 20;
  cache_options.scratch_capacity = 8;
  cache_options.scratch_batch = 4;
  KvCache cache(cache_options);
  SampleOptions options;
  options.num_levels = 4;
  const auto context = torch::randn({1, 12, 5});
  const auto with_cache = sampler.Generate(context, 4, options, &cache).tokens;
  EXPECT_EQ(cache.persistent_size(), 12);
  EXPECT_EQ(cache.scratch_size(), 0);
  EXPECT_TRUE(torch::allclose(with_cache, sampler.Generate(context, 4, options).tokens));
  // A cache still holding tokens is refused.
  EXPECT_THROW(sampler.Generate(context, 4, options, &cache), std::invalid_argument);
}

TEST(SamplerTest, BadInputThrowsClearly) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  const auto context = torch::randn({1, 4, 5});
  SampleOptions options;
  options.num_levels = 0;
  EXPECT_THROW(sampler.Generate(context, 1, options), std::invalid_argument);
  options.num_levels = 4;
  options.horizon = 0;
  EXPECT_THROW(sampler.Generate(context, 1, options), std::invalid_argument);
  options.horizon = 4;
  options.uncertainty = -1.0;
  EXPECT_THROW(sampler.Generate(context, 1, options), std::invalid_argument);
  options.uncertainty = 1.0;
  // Token dimension mismatch.
  EXPECT_THROW(sampler.Generate(torch::randn({1, 4, 6}), 1, options), std::invalid_argument);
  // Context batch neither 1 nor the candidate batch.
  EXPECT_THROW(sampler.Generate(torch::randn({2, 4, 5}), 3, options), std::invalid_argument);
  // NaN in the context.
  auto nan_context = context.clone();
  nan_context[0][1][2] = std::nan("");
  EXPECT_THROW(sampler.Generate(nan_context, 1, options), std::invalid_argument);
  // Context longer than an unbounded cache's capacity.
  KvCacheOptions cache_options = model->CacheOptions();
  cache_options.capacity = 3;
  cache_options.scratch_capacity = 4;
  KvCache small(cache_options);
  EXPECT_THROW(sampler.Generate(context, 1, options, &small), std::length_error);
  EXPECT_THROW(ParseCacheMode("approximate"), std::invalid_argument);
  // Batches are int in the cache; 2^32 + 1 used to wrap around to 1.
  EXPECT_THROW(sampler.Generate(context, 0, options), std::invalid_argument);
  EXPECT_THROW(sampler.Generate(context, (int64_t{1} << 32) + 1, options), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
