// CausalAttention's work for a call of inference size on the CPU in one
// pass per (batch entry, head) instead of two batched matrix products per
// segment and a softmax (internal to the world model): its scores into one
// padded row per query, their softmax in place, its mix. At the warm
// step's size (8 candidates x 4 heads, a window of 32) the batched products
// are 64 small BLAS calls whose per-call cost exceeds their arithmetic.
#ifndef DFMPC_WORLDMODEL_SRC_FUSED_ATTENTION_H_
#define DFMPC_WORLDMODEL_SRC_FUSED_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <vector>

#include "attention.h"

namespace dfmpc::worldmodel {

// True when FusedCausalAttention serves this call: CPU float tensors that
// autograd does not track, head_dim a multiple of 8 up to 64, and no
// AtenKernels switch on this thread (aten_kernels.h).
bool FusedAttentionApplies(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                           const at::Tensor& v, const std::vector<CachedKeysValues>& cached);

// CausalAttention (attention.h) with its FutureMask, for a call that
// FusedAttentionApplies to.
at::Tensor FusedCausalAttention(const std::vector<at::Tensor>& queries, const at::Tensor& k,
                                const at::Tensor& v, const std::vector<CachedKeysValues>& cached);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_FUSED_ATTENTION_H_
