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
// large absolute positions (long runs) keep full float precision.
RotaryAngles MakeRotaryAngles(const at::Tensor& frequencies, int64_t first, int64_t count,
                              const at::TensorOptions& options);
// Rotates x ([..., n, head_dim]) by `angles` ([n, head_dim]).
at::Tensor ApplyRotary(const at::Tensor& x, const RotaryAngles& angles);

// Keys (rotated at their absolute positions) and values of cached tokens.
// Batch is either the query batch or 1, in which case the segment is shared
// by every query without being copied. Queries attend to it rotated by
// `query_angles`.
struct CachedKeysValues {
  at::Tensor keys;    // [B or 1, heads, n, head_dim]
  at::Tensor values;  // [B or 1, heads, n, head_dim]
  const RotaryAngles* query_angles;
};

// [w, w] bool, true above the diagonal: what a window token may not see.
at::Tensor FutureMask(int64_t window, const at::TensorOptions& options);

// Softmax attention of the window queries over every cached token and,
// causally (`future` from FutureMask), over the window itself. q (not
// rotated), k (rotated), v: [B, heads, w, head_dim]; `angles` are the
// window's. Returns [B, heads, w, head_dim].
at::Tensor CausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const RotaryAngles& angles, const at::Tensor& future,
                           const std::vector<CachedKeysValues>& cached);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_ATTENTION_H_
