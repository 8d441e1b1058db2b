#include "fused_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "dfmpc/worldmodel/aten_kernels.h"
#include "simd.h"

namespace dfmpc::worldmodel {
namespace {

using simd::At;
using simd::Floats8;
using simd::kLanes;
using simd::Load;
constexpr int kMaxChunks = 8;  // head_dim <= 64 (MixSegment's cases)
constexpr int kRowBlock = 4;   // query rows per register block

inline int64_t Padded(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// [rows, head_dim] of one batch entry and head: rows `row_stride` apart,
// head_dim floats contiguous.
struct HeadRows {
  const float* data;
  int64_t row_stride;
  const float* Row(int64_t i) const { return data + i * row_stride; }
};

HeadRows RowsOf(const at::Tensor& t, int64_t b, int64_t h) {
  const int64_t batch = t.size(0) == 1 ? 0 : b;
  return {t.data_ptr<float>() + batch * t.stride(0) + h * t.stride(1), t.stride(2)};
}

// One keys-and-values segment of the call: the window's own (causal) or a
// cached one, with the queries that attend to it and its first column in
// the padded score row.
struct Segment {
  at::Tensor keys, values, queries;
  int64_t column = 0;
  bool causal = false;
};

// kRows query rows from i0 against every padded key column: the rows'
// accumulators stay in registers while each key column is loaded once.
template <int kRows>
DFMPC_INLINE void ScoreRows(HeadRows q, int64_t i0, const float* keys_t, int64_t padded,
                            int64_t head_dim, float* scores, int64_t score_stride) {
  for (int64_t j = 0; j < padded; j += kLanes) {
    Floats8 acc[kRows] = {};
    for (int64_t d = 0; d < head_dim; ++d) {
      const Floats8 column = Load(keys_t + d * padded + j);
      for (int r = 0; r < kRows; ++r) acc[r] += q.Row(i0 + r)[d] * column;
    }
    for (int r = 0; r < kRows; ++r) At(scores + (i0 + r) * score_stride + j) = acc[r];
  }
}

// scores[i, column + j] = q_i . k_j for j < n; the columns up to the next
// multiple of 8 get -inf, as do a causal segment's j > i.
DFMPC_SIMD_CLONES void ScoreSegment(HeadRows q, HeadRows k, int64_t rows, int64_t n,
                                    int64_t head_dim, bool causal, float* scores,
                                    int64_t score_stride, std::vector<float>* transposed) {
  const int64_t padded = Padded(n);
  transposed->assign(static_cast<size_t>(head_dim * padded), 0.0f);
  float* keys_t = transposed->data();  // [head_dim, padded]: keys as columns
  for (int64_t j = 0; j < n; ++j) {
    const float* key = k.Row(j);
    for (int64_t d = 0; d < head_dim; ++d) keys_t[d * padded + j] = key[d];
  }
  int64_t i = 0;
  for (; i + kRowBlock <= rows; i += kRowBlock) {
    ScoreRows<kRowBlock>(q, i, keys_t, padded, head_dim, scores, score_stride);
  }
  for (; i < rows; ++i) ScoreRows<1>(q, i, keys_t, padded, head_dim, scores, score_stride);
  const float minus_inf = -std::numeric_limits<float>::infinity();
  for (i = 0; i < rows; ++i) {
    float* row = scores + i * score_stride;
    for (int64_t j = causal ? i + 1 : n; j < padded; ++j) row[j] = minus_inf;
  }
}

// out[i0 .. i0 + kRows) += probs . v over the first `keys` value rows.
template <int kRows, int kChunks>
DFMPC_INLINE void MixRows(const float* probs, int64_t prob_stride, HeadRows v, int64_t i0,
                          int64_t keys, float* out, int64_t head_dim) {
  Floats8 acc[kRows][kChunks];
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kChunks; ++c) acc[r][c] = Load(out + (i0 + r) * head_dim + c * kLanes);
  }
  for (int64_t j = 0; j < keys; ++j) {
    const float* value = v.Row(j);
    for (int c = 0; c < kChunks; ++c) {
      const Floats8 part = Load(value + c * kLanes);
      for (int r = 0; r < kRows; ++r) acc[r][c] += probs[(i0 + r) * prob_stride + j] * part;
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kChunks; ++c) At(out + (i0 + r) * head_dim + c * kLanes) = acc[r][c];
  }
}

template <int kChunks>
DFMPC_INLINE void MixAllRows(const float* probs, int64_t prob_stride, HeadRows v, int64_t rows,
                             int64_t n, bool causal, float* out) {
  constexpr int64_t head_dim = kChunks * kLanes;
  int64_t i = 0;
  for (; i + kRowBlock <= rows; i += kRowBlock) {
    const int64_t keys = causal ? std::min(n, i + kRowBlock) : n;
    MixRows<kRowBlock, kChunks>(probs, prob_stride, v, i, keys, out, head_dim);
  }
  for (; i < rows; ++i) {
    MixRows<1, kChunks>(probs, prob_stride, v, i, causal ? std::min(n, i + 1) : n, out, head_dim);
  }
}

// out[i] += sum_j probs[i, j] v_j over a segment's n (causal: j <= i) keys.
DFMPC_SIMD_CLONES void MixSegment(const float* probs, int64_t prob_stride, HeadRows v, int64_t rows,
                                  int64_t n, int64_t head_dim, bool causal, float* out) {
  switch (head_dim / kLanes) {
    case 1:
      return MixAllRows<1>(probs, prob_stride, v, rows, n, causal, out);
    case 2:
      return MixAllRows<2>(probs, prob_stride, v, rows, n, causal, out);
    case 3:
      return MixAllRows<3>(probs, prob_stride, v, rows, n, causal, out);
    case 4:
      return MixAllRows<4>(probs, prob_stride, v, rows, n, causal, out);
    case 5:
      return MixAllRows<5>(probs, prob_stride, v, rows, n, causal, out);
    case 6:
      return MixAllRows<6>(probs, prob_stride, v, rows, n, causal, out);
    case 7:
      return MixAllRows<7>(probs, prob_stride, v, rows, n, causal, out);
    default:
      return MixAllRows<8>(probs, prob_stride, v, rows, n, causal, out);
  }
}

// Where a row's scores lie in the padded score row: a segment's first
// column, its keys and whether the row sees only keys up to its own.
struct SegmentColumns {
  int64_t column = 0, keys = 0;
  bool causal = false;
};

// Row i of a head's padded scores (-inf past each segment's keys) into
// probabilities in place: exponentials only over the keys row i sees, the
// rest of each segment's columns 0 (as ATen's softmax makes them).
DFMPC_SIMD_CLONES void SoftmaxRow(float* row, int64_t i, const SegmentColumns* segments,
                                  int64_t count, int64_t columns) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  Floats8 top = Floats8{} + minus_inf;
  for (int64_t j = 0; j < columns; j += kLanes) {
    const Floats8 part = Load(row + j);
    top = part > top ? part : top;
  }
  float highest = minus_inf;
  for (int64_t lane = 0; lane < kLanes; ++lane) highest = std::max(highest, top[lane]);
  Floats8 sum = {};
  for (int64_t s = 0; s < count; ++s) {
    const SegmentColumns& segment = segments[s];
    float* scores = row + segment.column;
    const int64_t seen = Padded(segment.causal ? std::min(segment.keys, i + 1) : segment.keys);
    int64_t j = 0;
    for (; j < seen; j += kLanes) {
      const Floats8 score = Load(scores + j);
      Floats8 e;
      simd::ExpOfNonPositive(score - highest, &e);
      const Floats8 probability = score == minus_inf ? Floats8{} : e;
      sum += probability;
      At(scores + j) = probability;
    }
    for (; j < Padded(segment.keys); j += kLanes) At(scores + j) = Floats8{};
  }
  float total = 0.0f;
  for (int64_t lane = 0; lane < kLanes; ++lane) total += sum[lane];
  const float inverse = 1.0f / total;
  for (int64_t j = 0; j < columns; j += kLanes) At(row + j) = Load(row + j) * inverse;
}

bool UnitLastStride(const at::Tensor& t) { return t.dim() == 4 && t.stride(3) == 1; }

}  // namespace

bool FusedAttentionApplies(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                           const at::Tensor& v, const std::vector<CachedKeysValues>& cached) {
  if (AtenKernels::on()) return false;
  std::vector<const at::Tensor*> all = {&k, &v};
  for (const at::Tensor& q : queries) all.push_back(&q);
  for (const CachedKeysValues& segment : cached) {
    const int64_t segment_batch = segment.keys.size(0);
    if (segment_batch != 1 && segment_batch != k.size(0)) return false;
    all.push_back(&segment.keys);
    all.push_back(&segment.values);
  }
  const bool grad = c10::GradMode::is_enabled();
  for (const at::Tensor* t : all) {
    if (!t->is_cpu() || t->scalar_type() != at::kFloat || (grad && t->requires_grad())) {
      return false;
    }
  }
  const int64_t head_dim = k.size(-1);
  return head_dim % kLanes == 0 && head_dim <= kLanes * kMaxChunks;
}

at::Tensor FusedCausalAttention(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                                const at::Tensor& v, const std::vector<CachedKeysValues>& cached) {
  auto unit_last = [](const at::Tensor& t) { return UnitLastStride(t) ? t : t.contiguous(); };
  std::vector<Segment> segments;
  int64_t columns = 0;
  for (const CachedKeysValues& c : cached) {
    segments.push_back({unit_last(c.keys), unit_last(c.values), unit_last(queries.at(c.query_set)),
                        columns, false});
    columns += Padded(c.keys.size(2));
  }
  segments.push_back({unit_last(k), unit_last(v), unit_last(queries[0]), columns, true});
  columns += Padded(k.size(2));

  const int64_t batch = k.size(0), heads = k.size(1), window = k.size(2), head_dim = k.size(3);
  std::vector<SegmentColumns> columns_of;
  for (const Segment& s : segments) columns_of.push_back({s.column, s.keys.size(2), s.causal});
  at::Tensor out = at::zeros({batch, heads, window, head_dim}, k.options());
  // Each head's scores, probabilities and mix in one pass, its scores in
  // a buffer of the task's own that stays in cache.
  at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> transposed, probs(static_cast<size_t>(window * columns));
    for (int64_t index = begin; index < end; ++index) {
      const int64_t b = index / heads, h = index % heads;
      float* rows = probs.data();
      for (const Segment& s : segments) {
        ScoreSegment(RowsOf(s.queries, b, h), RowsOf(s.keys, b, h), window, s.keys.size(2),
                     head_dim, s.causal, rows + s.column, columns, &transposed);
      }
      for (int64_t i = 0; i < window; ++i) {
        SoftmaxRow(rows + i * columns, i, columns_of.data(),
                   static_cast<int64_t>(columns_of.size()), columns);
      }
      float* mixed = out.data_ptr<float>() + index * window * head_dim;
      for (const Segment& s : segments) {
        MixSegment(rows + s.column, columns, RowsOf(s.values, b, h), window, s.keys.size(2),
                   head_dim, s.causal, mixed);
      }
    }
  });
  return out;
}

}  // namespace dfmpc::worldmodel
