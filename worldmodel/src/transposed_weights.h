// CPU products against weights kept transposed (internal to the world
// model). at::linear multiplies by a transposed view of each weight, and
// OpenBLAS copies that view into its packed layout on every call: at a few
// tokens a call that costs as much as the product. A contiguous transposed
// copy takes OpenBLAS's small-matrix path, which does not pack: 1.2-2.3x
// faster products from 8 to 32 rows at the shipped widths, break-even from
// 64 rows on (docs/experiments.md, "Weights kept transposed"), so only calls
// of at most 64 tokens take it. Larger calls may take bfloat16 copies
// instead (dfmpc/worldmodel/cpu_bf16.h), which oneDNN multiplies.
#ifndef DFMPC_WORLDMODEL_SRC_TRANSPOSED_WEIGHTS_H_
#define DFMPC_WORLDMODEL_SRC_TRANSPOSED_WEIGHTS_H_

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "weight_signature.h"

namespace dfmpc::worldmodel {

// A linear layer as a product reads it: its weight transposed (contiguous
// [in, out]) in the copy's dtype, its bias in float and, for ATen's form of
// the products (aten_kernels.h), in the copy's dtype. An undefined weight means the
// layer itself (at::linear).
struct LinearCopy {
  at::Tensor weight;
  at::Tensor bias;
  at::Tensor aten_bias;
};

class TransposedWeights {
 public:
  // Products of at most this many rows use float copies.
  static constexpr int64_t kMaxRows = 64;

  explicit TransposedWeights(std::vector<torch::nn::Linear> layers);

  // Whether copies may be used now (MemoizableNow of every weight and bias).
  bool Usable() const { return MemoizableNow(tensors_); }
  // Copies of the layers in `dtype` (float or bfloat16), remade when a
  // weight or bias changed (another storage or a newer version). Use where
  // Usable(). Thread-safe.
  std::vector<LinearCopy> Get(at::ScalarType dtype);

 private:
  struct Memo {
    WeightSignature signature;
    std::vector<LinearCopy> copies;
  };
  const std::vector<torch::nn::Linear> layers_;
  const std::vector<at::Tensor> tensors_;  // every weight and bias, in order
  std::mutex mutex_;
  Memo float_;
  Memo bf16_;
};

// layer(x), through `copy` when defined (the result has x's dtype).
// (The layer is non-const because a libtorch module's forward is.)
at::Tensor LinearThrough(torch::nn::Linear& layer, const at::Tensor& x, const LinearCopy& copy);

// fc2(gelu(fc1(x))). With bfloat16 copies the hidden layer is float (its
// bias and activation applied in float), rounded for the second product.
at::Tensor MlpThrough(torch::nn::Linear& fc1, torch::nn::Linear& fc2, const at::Tensor& x,
                      const LinearCopy& copy1, const LinearCopy& copy2);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_TRANSPOSED_WEIGHTS_H_
