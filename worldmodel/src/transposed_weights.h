// Small CPU products against weights kept transposed (internal to the world
// model). at::linear multiplies by a transposed view of each weight, and
// OpenBLAS copies that view into its packed layout on every call: at a few
// tokens a call that costs as much as the product. A contiguous transposed
// copy takes OpenBLAS's small-matrix path, which does not pack: 1.2-2.3x
// faster products from 8 to 32 rows at the shipped widths, break-even from
// 64 rows on (docs/experiments.md, "Weights kept transposed"), so only calls
// of at most 64 tokens take it.
#ifndef DFMPC_WORLDMODEL_SRC_TRANSPOSED_WEIGHTS_H_
#define DFMPC_WORLDMODEL_SRC_TRANSPOSED_WEIGHTS_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "weight_signature.h"

namespace dfmpc::worldmodel {

class TransposedWeights {
 public:
  // Products of at most this many rows use the copies.
  static constexpr int64_t kMaxRows = 64;

  // Contiguous transposed copies of the 2-D `weights`, remade when a weight
  // changed (another storage or a newer version). Use where
  // MemoizableNow(weights). Thread-safe.
  std::vector<at::Tensor> Get(const std::vector<at::Tensor>& weights);

 private:
  std::mutex mutex_;
  WeightSignature signature_;
  std::vector<at::Tensor> transposed_;
};

// layer(x), through `transposed` (layer's weight, transposed) when defined.
// (The layer is non-const because a libtorch module's forward is.)
at::Tensor LinearThrough(torch::nn::Linear& layer, const at::Tensor& x,
                         const at::Tensor& transposed);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_TRANSPOSED_WEIGHTS_H_
