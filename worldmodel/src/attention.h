// Rotary position embeddings and causal attention over a window of new
// tokens plus cached segments (internal to the world model).
#ifndef DFMPC_WORLDMODEL_SRC_ATTENTION_H_
#define DFMPC_WORLDMODEL_SRC_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace dfmpc::worldmodel {

// cos and sin of the rotary angles of consecutive positions, [n, head_dim];
// the sin table carries the sign of the rotate-half trick.
struct RotaryAngles {
  at::Tensor cos;
  at::Tensor sin;
};

// Inverse frequencies 10000^(-i / (head_dim / 2)), double precision.
at::Tensor RotaryFrequencies(int head_dim);
// Angles of positions first .. first + count - 1, computed in double so that
// large absolute positions (long runs) keep full float precision; both
// tables are multiplied by `scale` (queries carry attention's 1 / sqrt(hd)).
RotaryAngles MakeRotaryAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                              const at::TensorOptions& options, double scale = 1.0);
// The window's queries and keys rotated by one ApplyRotary: tables of
// [2, 1, 1, count, head_dim], the queries' (scaled by `query_scale`) then
// the keys', for a stacked [2, B, heads, count, head_dim] q and k.
RotaryAngles MakeWindowAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                              double query_scale, const at::TensorOptions& options);
// Rotates x ([..., n, head_dim]) by `angles` (tables that broadcast to x);
// a CPU call of inference size in one pass (fused_rotary.h).
at::Tensor ApplyRotary(const at::Tensor& x, const RotaryAngles& angles);

// Keys (rotated at their absolute positions) and values of cached tokens.
// Batch is either the query batch or 1, in which case the segment is shared
// by every query without being copied. The queries that attend to it are
// CausalAttention's queries[query_set].
struct CachedKeysValues {
  at::Tensor keys;    // [B or 1, heads, n, head_dim]
  at::Tensor values;  // [B or 1, heads, n, head_dim]
  int query_set = 0;
};

// [w, w] bool, true above the diagonal: what a window token may not see.
at::Tensor FutureMask(int64_t window, const at::TensorOptions& options);

// Softmax attention of the window queries over every cached token and,
// causally (`future` from FutureMask), over the window itself. `queries`
// are the window's queries already rotated and scaled by 1 / sqrt(hd):
// [0] at the window's own positions, further sets at the shifted ones
// some segments need. k (rotated), v and each query set: [B, heads, w,
// head_dim]. Returns [B, heads, w, head_dim]. A call of CPU float tensors
// that autograd does not track runs fused (fused_attention.h), any other
// as BatchedCausalAttention.
at::Tensor CausalAttention(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                           const at::Tensor& v, const at::Tensor& future,
                           const std::vector<CachedKeysValues>& cached);
// The same in batched matrix products: any device and type, autograd.
at::Tensor BatchedCausalAttention(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                                  const at::Tensor& v, const at::Tensor& future,
                                  const std::vector<CachedKeysValues>& cached);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_ATTENTION_H_
