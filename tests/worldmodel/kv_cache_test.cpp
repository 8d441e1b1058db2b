#include "dfmpc/worldmodel/kv_cache.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "attention.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

using testing::TinyModel;

KvCacheOptions SmallOptions(int capacity, int sinks, bool evict) {
  KvCacheOptions options;
  options.num_layers = 2;
  options.num_heads = 2;
  options.head_dim = 4;
  options.capacity = capacity;
  options.num_sinks = sinks;
  options.evict = evict;
  options.scratch_capacity = 3;
  return options;
}

// Keys and values whose every entry encodes the token's absolute position,
// so a slot's contents identify the token stored there.
std::vector<at::Tensor> Marked(const KvCacheOptions& o, int64_t position, double sign) {
  std::vector<at::Tensor> layers;
  for (int l = 0; l < o.num_layers; ++l) {
    layers.push_back(torch::full({1, o.num_heads, 1, o.head_dim}, sign * (position + 1000 * l)));
  }
  return layers;
}

TEST(KvCacheTest, RingKeepsSinksAndLastTokensLikeBruteForce) {
  const KvCacheOptions options = SmallOptions(/*capacity=*/7, /*sinks=*/2, /*evict=*/true);
  KvCache cache(options);
  const int64_t bytes = cache.StorageBytes();
  const void* storage = nullptr;
  const int window = options.capacity - options.num_sinks;
  for (int64_t p = 0; p < 103; ++p) {  // about 20 wrap-arounds of the ring
    cache.Append(Marked(options, p, 1.0), Marked(options, p, -1.0));
    if (p == 0) storage = cache.Segments(0, 1)[0].keys.data_ptr();

    // Brute-force reference: the first `sinks` tokens plus the last `window`.
    std::vector<int64_t> expected;
    for (int64_t q = 0; q <= p; ++q) {
      if (q < options.num_sinks || q > p - window) expected.push_back(q);
    }
    ASSERT_EQ(cache.KeptPositions(), expected) << "after appending position " << p;
    ASSERT_EQ(cache.persistent_size(), static_cast<int>(expected.size()));
    ASSERT_EQ(cache.evicted(), static_cast<int64_t>(p + 1 - expected.size()));

    // Each occupied slot holds exactly the token whose position the cache
    // gives for it, and its cache-relative position is its rank among the
    // kept tokens.
    std::vector<at::Tensor> keys, values;
    const std::vector<CacheSegment> segments = cache.Segments(1, 1);
    for (const CacheSegment& segment : segments) {
      keys.push_back(segment.keys);
      values.push_back(segment.values);
    }
    const at::Tensor all_keys = torch::cat(keys, 2), all_values = torch::cat(values, 2);
    for (int s = 0; s < cache.persistent_size(); ++s) {
      const int64_t position = cache.SlotPosition(s);
      EXPECT_EQ(all_keys[0][0][s][0].item<double>(), position + 1000);
      EXPECT_EQ(all_values[0][1][s][3].item<double>(), -(position + 1000));
      const auto rank = std::find(expected.begin(), expected.end(), position) - expected.begin();
      EXPECT_EQ(cache.RelativePosition(s), rank);
    }
    // Once tokens were evicted, queries see the sinks shifted by that many
    // positions and the ring as stored.
    if (cache.evicted() > 0) {
      ASSERT_EQ(segments.size(), 2u);
      EXPECT_EQ(segments[0].query_offset, cache.evicted());
      EXPECT_EQ(segments[1].query_offset, 0);
    } else {
      ASSERT_EQ(segments.size(), 1u);
    }
  }
  // Storage was allocated once and never moved.
  EXPECT_EQ(cache.Segments(0, 1)[0].keys.data_ptr(), storage);
  EXPECT_EQ(cache.StorageBytes(), bytes);
}

TEST(KvCacheTest, UnboundedCacheRefusesToOverflow) {
  const KvCacheOptions options = SmallOptions(3, 0, false);
  KvCache cache(options);
  for (int64_t p = 0; p < 3; ++p) cache.Append(Marked(options, p, 1), Marked(options, p, 1));
  EXPECT_THROW(cache.Append(Marked(options, 3, 1), Marked(options, 3, 1)), std::length_error);
  EXPECT_EQ(cache.persistent_size(), 3);
}

TEST(KvCacheTest, ScratchRollsBackWithoutTouchingHistory) {
  const KvCacheOptions options = SmallOptions(4, 0, false);
  KvCache cache(options);
  cache.Append(Marked(options, 0, 1), Marked(options, 0, 1));
  cache.AppendScratch(Marked(options, 1, 1), Marked(options, 1, 1));
  cache.AppendScratch(Marked(options, 2, 1), Marked(options, 2, 1));
  EXPECT_EQ(cache.scratch_size(), 2);
  EXPECT_EQ(cache.NextPosition(), 3);
  // The second scratch slot holds the token at position 2.
  const std::vector<CacheSegment> segments = cache.Segments(0, 1);
  ASSERT_EQ(segments.size(), 2u);
  ASSERT_EQ(segments[1].keys.size(2), 2);
  EXPECT_EQ(segments[1].keys[0][0][1][0].item<double>(), 2);
  EXPECT_EQ(cache.size(), 3);
  // History cannot grow under uncommitted plan tokens.
  EXPECT_THROW(cache.Append(Marked(options, 3, 1), Marked(options, 3, 1)), std::invalid_argument);
  cache.RollbackScratch();
  EXPECT_EQ(cache.scratch_size(), 0);
  EXPECT_EQ(cache.Segments(0, 1).size(), 1u);  // the history alone
  EXPECT_EQ(cache.persistent_size(), 1);
  EXPECT_EQ(cache.NextPosition(), 1);
}

// Every occupied slot's contents, in slot order, of every layer, with the
// kept positions.
struct CacheContents {
  std::vector<int64_t> positions;
  std::vector<at::Tensor> keys, values;
};
CacheContents Contents(const KvCache& cache) {
  CacheContents contents{cache.KeptPositions(), {}, {}};
  for (int layer = 0; layer < cache.options().num_layers; ++layer) {
    for (const CacheSegment& segment : cache.Segments(layer, 1)) {
      contents.keys.push_back(segment.keys.clone());
      contents.values.push_back(segment.values.clone());
    }
  }
  return contents;
}
void ExpectSameContents(const CacheContents& a, const CacheContents& b) {
  ASSERT_EQ(a.positions, b.positions);
  ASSERT_EQ(a.keys.size(), b.keys.size());
  for (size_t i = 0; i < a.keys.size(); ++i) {
    EXPECT_TRUE(torch::equal(a.keys[i], b.keys[i])) << "segment " << i;
    EXPECT_TRUE(torch::equal(a.values[i], b.values[i])) << "segment " << i;
  }
}

TEST(KvCacheTest, RestoreUndoesAppendsAcrossTheRingsWrapAround) {
  const KvCacheOptions options = SmallOptions(/*capacity=*/5, /*sinks=*/1, /*evict=*/true);
  KvCache cache(options);
  for (int64_t p = 0; p < 7; ++p) cache.Append(Marked(options, p, 1), Marked(options, p, -1));
  const CacheContents before = Contents(cache);
  const KvCacheMark mark = cache.Mark(3);
  for (int64_t p = 7; p < 10; ++p) cache.Append(Marked(options, p, 1), Marked(options, p, -1));
  cache.AppendScratch(Marked(options, 10, 1), Marked(options, 10, -1));
  cache.Restore(mark);
  EXPECT_EQ(cache.scratch_size(), 0);
  EXPECT_EQ(cache.NextPosition(), 7);
  ExpectSameContents(Contents(cache), before);
}

TEST(KvCacheTest, MarkIntoAReusedBufferRestoresLikeAFreshMark) {
  const KvCacheOptions options = SmallOptions(/*capacity=*/5, /*sinks=*/1, /*evict=*/true);
  KvCache cache(options);
  KvCacheMark mark;
  int64_t next = 0;
  auto append = [&](int n, double sign) {
    for (int i = 0; i < n; ++i, ++next) {
      cache.Append(Marked(options, next, sign), Marked(options, next, -sign));
    }
  };
  // Marks `tokens`, appends as many and restores: the contents before.
  auto mark_append_restore = [&](int tokens) {
    const CacheContents before = Contents(cache);
    const int64_t position = cache.NextPosition();
    cache.Mark(tokens, mark);
    append(tokens, 7.0);
    cache.Restore(mark);
    next = position;
    EXPECT_EQ(cache.NextPosition(), position);
    ExpectSameContents(Contents(cache), before);
  };
  append(2, 1.0);
  cache.Mark(3, mark);  // sizes the buffer for three tokens
  const void* storage = mark.keys[0].data_ptr();
  // Marks of 1 to 3 tokens, before and across the ring's wrap-around, each
  // undone exactly, all in the first buffer.
  for (int tokens : {1, 3, 2, 3, 1, 3}) {
    mark_append_restore(tokens);
    EXPECT_EQ(mark.keys[0].data_ptr(), storage) << "marking " << tokens << " token(s)";
    append(1, 1.0);  // moves the ring on
  }
  // More tokens than the buffer holds: it grows, and still restores.
  mark_append_restore(4);
  EXPECT_GE(mark.keys[0].size(2), 4);
  // A Snapshot's tensors (the planner's restart path) reused by a Mark.
  mark = cache.Snapshot();
  mark_append_restore(2);
  EXPECT_FALSE(mark.whole);
}
TEST(KvCacheTest, RestoreRefusesAMarkFromBeforeAClearAndChangesNothing) {
  const KvCacheOptions options = SmallOptions(4, 0, true);
  KvCache cache(options);
  for (int64_t p = 0; p < 3; ++p) cache.Append(Marked(options, p, 1), Marked(options, p, -1));
  const KvCacheMark mark = cache.Mark(2);
  cache.Clear();
  // As many tokens as the mark covers, so that the counters alone match up.
  for (int64_t p = 0; p < 4; ++p) cache.Append(Marked(options, p, 2), Marked(options, p, -2));
  const CacheContents after_clear = Contents(cache);
  EXPECT_THROW(cache.Restore(mark), std::invalid_argument);
  ExpectSameContents(Contents(cache), after_clear);
}

TEST(KvCacheTest, SnapshotRestoresTheHistoryAfterAClearAndAppends) {
  const KvCacheOptions options = SmallOptions(/*capacity=*/4, /*sinks=*/0, /*evict=*/true);
  KvCache cache(options);
  for (int64_t p = 0; p < 6; ++p) cache.Append(Marked(options, p, 1), Marked(options, p, -1));
  const CacheContents before = Contents(cache);
  const KvCacheMark snapshot = cache.Snapshot();
  const KvCacheMark mark = cache.Mark(1);  // taken before the Clear, valid again after Restore
  cache.Clear();
  cache.Append(Marked(options, 0, 5), Marked(options, 0, -5));
  cache.Restore(snapshot);
  EXPECT_EQ(cache.NextPosition(), 6);
  ExpectSameContents(Contents(cache), before);
  cache.Append(Marked(options, 6, 1), Marked(options, 6, -1));
  cache.Restore(mark);
  ExpectSameContents(Contents(cache), before);
}

TEST(KvCacheTest, BadOptionsAndTensorsThrow) {
  KvCacheOptions options = SmallOptions(4, 4, true);  // no ring slot left
  EXPECT_THROW(KvCache{options}, std::invalid_argument);
  options = SmallOptions(0, 0, false);
  EXPECT_THROW(KvCache{options}, std::invalid_argument);
  options = SmallOptions(4, 0, false);
  KvCache cache(options);
  auto wrong = Marked(options, 0, 1);
  wrong[1] = torch::zeros({1, 2, 1, 5});  // head_dim 5 instead of 4
  EXPECT_THROW(cache.Append(wrong, wrong), std::invalid_argument);
  EXPECT_THROW(cache.Append({wrong[0]}, {wrong[0]}), std::invalid_argument);
}

// Encodes `tokens` one at a time into `cache`, returning each step's output.
std::vector<at::Tensor> StreamThrough(DfTransformerImpl& model, KvCache& cache,
                                      const at::Tensor& tokens) {
  std::vector<at::Tensor> outputs;
  for (int64_t i = 0; i < tokens.size(1); ++i) {
    WindowKeysValues kv;
    outputs.push_back(
        model.Forward(tokens.narrow(1, i, 1), torch::full({1}, -1, torch::kLong), &cache, &kv));
    cache.Append(kv.keys, kv.values);
  }
  return outputs;
}

TEST(KvCacheTest, BoundedEqualsUnboundedUntilFirstEviction) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const auto tokens = torch::randn({1, 40, 5});
  KvCacheOptions unbounded = model->CacheOptions();
  unbounded.capacity = 40;
  KvCacheOptions bounded = unbounded;
  bounded.capacity = 12;
  bounded.num_sinks = 2;
  bounded.evict = true;
  KvCache full_cache(unbounded), ring_cache(bounded);
  const auto full = StreamThrough(*model, full_cache, tokens);
  const auto ring = StreamThrough(*model, ring_cache, tokens);
  // Token i attends to i earlier tokens; up to i = capacity nothing is evicted.
  for (int i = 0; i <= bounded.capacity; ++i) {
    EXPECT_TRUE(torch::equal(full[i], ring[i])) << "token " << i;
  }
  // After eviction the ring sees fewer tokens, so outputs differ.
  EXPECT_FALSE(torch::allclose(full.back(), ring.back()));
  EXPECT_EQ(ring_cache.evicted(), 40 - bounded.capacity);
}

// Encoding tokens one by one through the cache equals one causal pass over
// all of them: the basis of appending one real token per control step.
TEST(KvCacheTest, IncrementalEncodingEqualsFullCausalPass) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const auto tokens = torch::randn({1, 10, 5});
  KvCacheOptions options = model->CacheOptions();
  options.capacity = 10;
  KvCache cache(options);
  const auto steps = StreamThrough(*model, cache, tokens);
  const auto whole =
      model->Forward(tokens, torch::full({10}, -1, torch::kLong), nullptr);
  for (int i = 0; i < 10; ++i) {
    EXPECT_LT((steps[i] - whole.narrow(1, i, 1)).abs().max().item<double>(), 1e-5);
  }
}

TEST(KvCacheTest, SharedHistoryBroadcastsOverCandidatesWithoutCopies) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  const auto history = torch::randn({1, 9, 5});
  const auto window = torch::randn({4, 3, 5});
  const auto steps = torch::full({3}, 200, torch::kLong);

  KvCacheOptions shared_options = model->CacheOptions();
  shared_options.capacity = 9;
  KvCache shared(shared_options);
  StreamThrough(*model, shared, history);
  KvCacheOptions copied_options = shared_options;
  copied_options.persistent_batch = 4;
  KvCache copied(copied_options);
  WindowKeysValues kv;
  model->Forward(history.expand({4, 9, 5}), torch::full({9}, -1, torch::kLong), nullptr, &kv);
  copied.Append(kv.keys, kv.values);

  const auto from_shared = model->Forward(window, steps, &shared);
  const auto from_copied = model->Forward(window, steps, &copied);
  EXPECT_LT((from_shared - from_copied).abs().max().item<double>(), 1e-5);
  EXPECT_EQ(shared.StorageBytes() * 4, copied.StorageBytes());
}

// After eviction a query sees the sinks at cache-relative positions 0 ..
// n_sink - 1 and the ring contiguously after them (kv_cache.h). Checked
// against one from-scratch causal pass over the kept tokens at exactly those
// positions, through both layers of the tiny model. The cache gets the
// per-layer keys and values of that pass, the ring's keys re-rotated to their
// absolute positions, so that only positions can differ: ring tokens streamed
// through the model would also carry the evicted history in their deeper
// layers.
TEST(KvCacheTest, SinksAndRingAttendLikeAFromScratchPassAtRelativePositions) {
  torch::NoGradGuard no_grad;
  DfTransformer model = TinyModel();
  KvCacheOptions options = model->CacheOptions();
  options.capacity = 8;
  options.num_sinks = 2;
  options.evict = true;
  const int sinks = options.num_sinks, ring = options.capacity - sinks;
  const int64_t evicted = 1001;  // not a multiple of the ring: its slots wrap mid-run
  const auto kept = torch::randn({1, options.capacity, 5});
  const auto window = torch::randn({1, 3, 5});
  const auto window_steps = torch::tensor({999, 400, 50}, torch::kLong);

  const auto clean = torch::full({options.capacity}, -1, torch::kLong);
  WindowKeysValues kv;
  model->Forward(kept, clean, nullptr, &kv);
  const at::Tensor expected =
      model->Forward(torch::cat({kept, window}, 1), torch::cat({clean, window_steps}), nullptr)
          .narrow(1, options.capacity, 3);

  auto slice = [](const std::vector<at::Tensor>& layers, int64_t first, int64_t n) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : layers) out.push_back(t.narrow(2, first, n));
    return out;
  };
  const RotaryAngles shift = MakeRotaryAngles(RotaryFrequencies(options.head_dim), evicted, 1,
                                              torch::TensorOptions().dtype(torch::kFloat));
  std::vector<at::Tensor> ring_keys;
  for (const at::Tensor& keys : slice(kv.keys, sinks, ring)) {
    ring_keys.push_back(ApplyRotary(keys, shift));
  }
  // Tokens that will be evicted, far from the kept ones: any leak shows.
  std::vector<at::Tensor> evicted_kv;
  for (int l = 0; l < options.num_layers; ++l) {
    evicted_kv.push_back(100 * torch::randn({1, options.num_heads, evicted, options.head_dim}));
  }
  KvCache cache(options);
  cache.Append(slice(kv.keys, 0, sinks), slice(kv.values, 0, sinks));
  cache.Append(evicted_kv, evicted_kv);
  cache.Append(ring_keys, slice(kv.values, sinks, ring));
  ASSERT_EQ(cache.evicted(), evicted);
  std::vector<int64_t> positions = {0, 1};
  for (int64_t p = sinks + evicted; p < options.capacity + evicted; ++p) positions.push_back(p);
  ASSERT_EQ(cache.KeptPositions(), positions);

  const at::Tensor actual = model->Forward(window, window_steps, &cache);
  // Both sides are fp32 through 2 layers; they differ by one extra rotation
  // of the ring keys (angles at position 1001 rounded to float, ~1e-7
  // relative) and by how the attention sums are split into segments. That
  // is the rounding of IncrementalEncodingEqualsFullCausalPass, whose 1e-5
  // bound applies (about 1.5e-7 seen here); the ring one position off
  // changes outputs by about 2e-3.
  EXPECT_LT((actual - expected).abs().max().item<double>(), 1e-5);
}

TEST(TransformerTest, RejectsBadShapesAndPositions) {
  DfTransformer model = TinyModel();
  const auto steps = torch::full({3}, 10, torch::kLong);
  EXPECT_THROW(model->Forward(torch::randn({1, 3, 4}), steps, nullptr), std::invalid_argument);
  EXPECT_THROW(model->Forward(torch::randn({1, 3, 5}), torch::full({2}, 10, torch::kLong),
                              nullptr),
               std::invalid_argument);
  // The tiny model attends to at most 128 tokens.
  EXPECT_THROW(model->Forward(torch::randn({1, 129, 5}), torch::full({129}, 10, torch::kLong),
                              nullptr),
               std::out_of_range);
  EXPECT_THROW(
      model->Forward(torch::randn({1, 3, 5}), torch::full({3}, 1000, torch::kLong), nullptr),
      std::out_of_range);
  TransformerConfig config = testing::TinyConfig();
  config.heads = 3;
  EXPECT_THROW(DfTransformer{config}, std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
