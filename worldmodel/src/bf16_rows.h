// Conversions between float and bfloat16 around the CPU's bfloat16 products
// (internal to the world model; transposed_weights.cpp). LibTorch's
// conversion kernels convert one element at a time: in a bfloat16 warm step
// they cost twice the products they fed. These convert eight at a time, with
// LibTorch's rounding (to nearest, ties to even; a NaN stays a NaN), and
// add a layer's float bias while widening its bfloat16 output.
#ifndef DFMPC_WORLDMODEL_SRC_BF16_ROWS_H_
#define DFMPC_WORLDMODEL_SRC_BF16_ROWS_H_

#include <ATen/core/Tensor.h>

namespace dfmpc::worldmodel {

// x (CPU, float, any shape) rounded to bfloat16: a contiguous tensor of x's
// shape, bit for bit x.to(at::kBFloat16) but for a NaN's payload.
at::Tensor RoundToBf16(const at::Tensor& x);

// y [rows, columns] (CPU, bfloat16) widened to float, plus bias [columns]
// (float) where defined: y.to(at::kFloat) + bias, bit for bit.
at::Tensor WidenPlusBias(const at::Tensor& y, const at::Tensor& bias);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_BF16_ROWS_H_
