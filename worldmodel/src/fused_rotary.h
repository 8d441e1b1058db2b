// ApplyRotary's work for a CPU call of inference size in one pass (internal
// to the world model). ATen's form, x * cos + roll(x) * sin, makes four
// strided passes over a q and k that are permuted views of the q, k, v
// projection; at the warm step's size (8 candidates x 4 heads, a window of
// 32, head_dim 24) they take 0.20 ms a layer, this pass 0.025.
#ifndef DFMPC_WORLDMODEL_SRC_FUSED_ROTARY_H_
#define DFMPC_WORLDMODEL_SRC_FUSED_ROTARY_H_

#include <ATen/core/Tensor.h>

#include "attention.h"

namespace dfmpc::worldmodel {

// True when FusedRotary serves this call: a CPU float x ([..., n,
// head_dim], head_dim contiguous) and angle tables that autograd does not
// track, tables that broadcast to x's shape, and no AtenKernels switch
// on this thread (aten_kernels.h).
bool FusedRotaryApplies(const at::Tensor& x, const RotaryAngles& angles);

// ApplyRotary (attention.h) for a call that FusedRotaryApplies to, into a
// new contiguous tensor of x's shape: the same two products and their sum,
// each rounded as ATen rounds them (so the same floats, unless a compiler
// fuses a product into the sum on one side).
at::Tensor FusedRotary(const at::Tensor& x, const RotaryAngles& angles);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_FUSED_ROTARY_H_
