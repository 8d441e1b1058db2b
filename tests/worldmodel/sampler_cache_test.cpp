// Sampler::Generate with a caller's KV cache: caches that do not fit the
// model or the context are refused, and a throw leaves the cache as given.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>
#include <string>

#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/sampler.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyModel;

KvCacheOptions CacheFor(const DfTransformerImpl& model, int capacity, int scratch) {
  KvCacheOptions options = model.CacheOptions();
  options.capacity = capacity;
  options.scratch_capacity = scratch;
  return options;
}

TEST(SamplerCacheTest, CacheForAnotherModelIsRefusedNamingTheMismatch) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();  // 2 layers, 2 heads of 16, float, CPU
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  const auto context = torch::randn({1, 4, 5});
  SampleOptions options;
  options.num_levels = 4;
  options.horizon = 4;

  struct Case {
    std::string expected;  // part of the message
    void (*change)(KvCacheOptions&);
  };
  const Case cases[] = {
      {"layers 3", [](KvCacheOptions& o) { o.num_layers = 3; }},
      {"heads 4", [](KvCacheOptions& o) { o.num_heads = 4; }},
      {"head_dim 8", [](KvCacheOptions& o) { o.head_dim = 8; }},
      {"dtype Double", [](KvCacheOptions& o) { o.dtype = at::kDouble; }},
      {"device meta", [](KvCacheOptions& o) { o.device = at::kMeta; }},
  };
  for (const Case& c : cases) {
    KvCacheOptions cache_options = CacheFor(*model, 8, 4);
    c.change(cache_options);
    KvCache cache(cache_options);
    for (int call = 0; call < 2; ++call) {
      try {
        if (call == 0) {
          model->Forward(context, torch::full({4}, -1, torch::kLong), &cache);
        } else {
          sampler.Generate(context, 1, options, &cache);
        }
        ADD_FAILURE() << "a cache with " << c.expected << " was accepted by call " << call;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
      }
    }
  }
}

// Attention would read a history of batch 3 as one shared by all candidates.
TEST(SamplerCacheTest, WindowOfAnotherBatchThanTheHistoryIsRefused) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  KvCacheOptions options = CacheFor(*model, 8, 0);
  options.persistent_batch = 3;
  KvCache cache(options);
  const auto steps = torch::full({2}, -1, torch::kLong);
  WindowKeysValues kv;
  model->Forward(torch::randn({3, 2, 5}), steps, &cache, &kv);
  cache.Append(kv.keys, kv.values);
  try {
    model->Forward(torch::randn({4, 1, 5}), torch::full({1}, 10, torch::kLong), &cache);
    ADD_FAILURE() << "a window of batch 4 attended to a history of batch 3";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("history of batch 3"), std::string::npos) << e.what();
  }
}

TEST(SamplerCacheTest, MoreLevelsThanTimestepsAreRefused) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule(model->config().num_timesteps);
  const Sampler sampler(*model, schedule);
  SampleOptions options;
  options.horizon = 1;
  options.num_levels = schedule.num_timesteps() + 1;  // level 1 would be clean
  EXPECT_THROW(sampler.Generate(torch::randn({1, 2, 5}), 1, options), std::invalid_argument);
}

// An evicting cache would drop context tokens: the sampler refuses a context
// longer than its capacity and stays exact within it.
TEST(SamplerCacheTest, EvictingCacheTakesOnlyContextsItHoldsWhole) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  KvCacheOptions cache_options = CacheFor(*model, 8, 4);
  cache_options.evict = true;
  cache_options.num_sinks = 2;
  KvCache cache(cache_options);
  SampleOptions options;
  options.num_levels = 4;
  options.horizon = 4;
  EXPECT_THROW(sampler.Generate(torch::randn({1, 9, 5}), 1, options, &cache), std::length_error);
  EXPECT_EQ(cache.persistent_size(), 0);

  const auto context = torch::randn({1, 8, 5});
  const auto with_cache = sampler.Generate(context, 1, options, &cache).tokens;
  EXPECT_EQ(cache.evicted(), 0);
  EXPECT_TRUE(torch::equal(with_cache, sampler.Generate(context, 1, options).tokens));
}

// Strong exception guarantee. The tiny model attends to at most 128 tokens,
// which Generate does not check up front, so with S = 120, K = 4 and H = 16
// the model throws at call m = 8: its window ends at token 8 and 120 context
// plus 9 generated tokens exceed 128. By then the context and the 4 tokens
// that became clean are in the cache.
TEST(SamplerCacheTest, ThrowMidGenerationLeavesTheCallersCacheEmptyAndReusable) {
  DfTransformer model = TinyModel();
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  KvCache cache(CacheFor(*model, 120, 16));
  SampleOptions options;
  options.num_levels = 4;
  options.horizon = 16;
  ASSERT_EQ(model->config().max_positions, 128);
  EXPECT_THROW(sampler.Generate(torch::randn({1, 120, 5}), 1, options, &cache), std::out_of_range);
  EXPECT_EQ(cache.persistent_size(), 0);
  EXPECT_EQ(cache.scratch_size(), 0);
  EXPECT_EQ(cache.NextPosition(), 0);
  EXPECT_TRUE(cache.KeptPositions().empty());

  // Reused, it gives what a fresh cache gives.
  const auto context = torch::randn({1, 100, 5});
  const auto reused = sampler.Generate(context, 1, options, &cache).tokens;
  KvCache fresh(CacheFor(*model, 120, 16));
  EXPECT_TRUE(torch::equal(reused, sampler.Generate(context, 1, options, &fresh).tokens));
  EXPECT_EQ(cache.persistent_size(), 100);
}

}  // namespace
}  // namespace dfmpc::worldmodel
