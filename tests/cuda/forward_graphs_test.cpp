// ForwardGraphs: replays equal eager forward calls (on a GPU), and every
// call runs eagerly where graphs cannot serve (on the CPU, with autograd).
#include "dfmpc/worldmodel/forward_graphs.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <vector>

#include "cuda_testing.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/open_loop_rollout.h"
#include "dfmpc/worldmodel/transformer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 5;

// A ring of `capacity` slots on the model's device, filled with clean
// random tokens, so that appends evict and the history's shape repeats.
KvCache FullRing(DfTransformerImpl& model, int capacity) {
  KvCacheOptions options = model.CacheOptions();
  options.capacity = capacity;
  options.evict = true;
  KvCache cache(options);
  const at::Device device = options.device;
  WindowKeysValues kv;
  model.Forward(torch::randn({1, capacity, kTokenDim}).to(device),
                torch::full({capacity}, -1, torch::kLong), &cache, &kv);
  cache.Append(kv.keys, kv.values);
  return cache;
}

// Appends one clean random token: the ring moves one slot, positions one on.
void AppendOne(DfTransformerImpl& model, KvCache& cache) {
  WindowKeysValues kv;
  model.Forward(torch::randn({1, 1, kTokenDim}).to(cache.options().device),
                torch::full({1}, -1, torch::kLong), &cache, &kv);
  cache.Append(kv.keys, kv.values);
}

double MaxDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a.cpu() - b.cpu()).abs().max().item<double>();
}

// A window of 3 candidates x 4 tokens at the levels a warm step has.
const std::vector<int64_t> kWindowSteps = {-1, 120, 480, 999};

TEST(ForwardGraphsTest, OnTheCpuEveryCallRunsEagerlyAndEqualsForward) {
  DfTransformer model = testing::TinyModel(kTokenDim);
  KvCache cache = FullRing(*model, 6);
  ForwardGraphs graphs(*model);
  const at::Tensor steps = torch::tensor(kWindowSteps);
  torch::NoGradGuard no_grad;
  for (int call = 0; call < 3; ++call) {
    const at::Tensor tokens = torch::randn({3, 4, kTokenDim});
    WindowKeysValues eager_kv, graph_kv;
    const at::Tensor eager = model->Forward(tokens, steps, &cache, &eager_kv);
    const at::Tensor served = graphs.Forward(tokens, steps, &cache, &graph_kv);
    EXPECT_TRUE(torch::equal(eager, served));
    EXPECT_TRUE(torch::equal(eager_kv.keys.back(), graph_kv.keys.back()));
  }
  EXPECT_EQ(graphs.stats().eager, 3);
  EXPECT_EQ(graphs.stats().captured, 0);
  EXPECT_EQ(graphs.stats().replayed, 0);
}

TEST(ForwardGraphsTest, ReplaysEqualEagerCallsWhileTheRingWraps) {
  DFMPC_SKIP_WITHOUT_CUDA();
  DfTransformer model = testing::TinyModel(kTokenDim);
  model->to(torch::kCUDA);
  KvCache cache = FullRing(*model, 6);
  ForwardGraphs graphs(*model);
  const at::Tensor steps = torch::tensor(kWindowSteps);
  const c10::InferenceMode inference;
  constexpr int kCalls = 8;  // more than the ring: every slot gets overwritten
  for (int call = 0; call < kCalls; ++call) {
    const at::Tensor tokens = torch::randn({3, 4, kTokenDim}).cuda();
    WindowKeysValues eager_kv, graph_kv;
    const at::Tensor eager = model->Forward(tokens, steps, &cache, &eager_kv);
    const at::Tensor served = graphs.Forward(tokens, steps, &cache, &graph_kv);
    // The same kernels on the same inputs: equal up to float rounding.
    EXPECT_LE(MaxDifference(eager, served), 1e-5) << "call " << call;
    for (size_t l = 0; l < eager_kv.keys.size(); ++l) {
      EXPECT_LE(MaxDifference(eager_kv.keys[l], graph_kv.keys[l]), 1e-5);
      EXPECT_LE(MaxDifference(eager_kv.values[l], graph_kv.values[l]), 1e-5);
    }
    AppendOne(*model, cache);
  }
  // The first call of the shape runs eagerly, the second captures it.
  EXPECT_TRUE(graphs.stats().failure.empty()) << graphs.stats().failure;
  EXPECT_EQ(graphs.stats().eager, 1);
  EXPECT_EQ(graphs.stats().captured, 1);
  EXPECT_EQ(graphs.stats().replayed, kCalls - 1);
}

TEST(ForwardGraphsTest, RunsEagerlyWhileAutogradIsOn) {
  DFMPC_SKIP_WITHOUT_CUDA();
  DfTransformer model = testing::TinyModel(kTokenDim);
  model->to(torch::kCUDA);
  KvCache cache = FullRing(*model, 6);
  ForwardGraphs graphs(*model);
  for (int call = 0; call < 3; ++call) {
    graphs.Forward(torch::randn({1, 4, kTokenDim}).cuda(), torch::tensor(kWindowSteps), &cache);
  }
  EXPECT_EQ(graphs.stats().eager, 3);
  EXPECT_EQ(graphs.stats().captured, 0);
}

TEST(ForwardGraphsTest, RolloutChunksWithGraphsEqualEagerChunks) {
  DFMPC_SKIP_WITHOUT_CUDA();
  DfTransformer model = testing::TinyModel(kTokenDim);
  model->to(torch::kCUDA);
  const NoiseSchedule schedule;
  RolloutOptions options;
  options.chunk = 4;
  options.num_levels = 4;
  options.history = 12;
  options.num_sinks = 2;
  options.seed = 3;
  const at::Tensor context = torch::randn({12, kTokenDim});
  std::vector<at::Tensor> outputs[2];
  const ForwardGraphStats* stats = nullptr;
  std::unique_ptr<OpenLoopRollout> with_graphs;
  for (bool graphs : {false, true}) {
    options.cuda_graphs = graphs;
    auto rollout = std::make_unique<OpenLoopRollout>(*model, schedule, 2, options);
    rollout->Reset(context);
    torch::manual_seed(11);  // the same actions for both
    for (int chunk = 0; chunk < 8; ++chunk) {
      outputs[graphs].push_back(rollout->Next(torch::randn({4, 2})));
    }
    if (graphs) {
      stats = rollout->graph_stats();
      with_graphs = std::move(rollout);
    }
  }
  for (size_t chunk = 0; chunk < outputs[0].size(); ++chunk) {
    EXPECT_LE(MaxDifference(outputs[0][chunk], outputs[1][chunk]), 1e-5) << "chunk " << chunk;
  }
  ASSERT_NE(stats, nullptr);
  EXPECT_TRUE(stats->failure.empty()) << stats->failure;
  EXPECT_GT(stats->replayed, 0);
}

}  // namespace
}  // namespace dfmpc::worldmodel
