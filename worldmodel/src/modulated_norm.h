// A block's norm and its per-token modulation, layer_norm(x) * scale + shift,
// in one pass for a CPU call of inference size (internal to the world
// model). ATen's form is two operators (a layer norm into a new tensor, then
// a broadcast addcmul), and at a warm step's size (256 rows of 96) the two
// took a seventh of the step.
#ifndef DFMPC_WORLDMODEL_SRC_MODULATED_NORM_H_
#define DFMPC_WORLDMODEL_SRC_MODULATED_NORM_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/normalization.h>

namespace dfmpc::worldmodel {

// at::addcmul(shift, norm(x), scale) for x [B, w, D] and shift, scale
// [B or 1, w, D] (D contiguous); `norm` has no affine weights. One pass
// where a CPU float call that autograd does not track allows it and no
// AtenKernels switch is on (aten_kernels.h); ATen's form otherwise.
at::Tensor ModulatedNorm(torch::nn::LayerNorm& norm, const at::Tensor& x, const at::Tensor& shift,
                         const at::Tensor& scale);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_MODULATED_NORM_H_
