#include "transposed_weights.h"

#include <ATen/ATen.h>

namespace dfmpc::worldmodel {

std::vector<at::Tensor> TransposedWeights::Get(const std::vector<at::Tensor>& weights) {
  const std::lock_guard<std::mutex> lock(mutex_);
  WeightSignature signature = SignatureOf(weights);
  if (signature != signature_) {
    std::vector<at::Tensor> transposed;
    transposed.reserve(weights.size());
    for (const at::Tensor& weight : weights) transposed.push_back(weight.t().contiguous());
    // Assigned only once every copy exists, so a throw leaves the memo whole.
    transposed_ = std::move(transposed);
    signature_ = std::move(signature);
  }
  return transposed_;
}

at::Tensor LinearThrough(torch::nn::Linear& layer, const at::Tensor& x,
                         const at::Tensor& transposed) {
  if (!transposed.defined()) return layer(x);
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = transposed.size(1);
  const at::Tensor rows = x.reshape({-1, x.size(-1)});
  const at::Tensor& bias = layer->bias;
  return (bias.defined() ? at::addmm(bias, rows, transposed) : at::mm(rows, transposed))
      .view(sizes);
}

}  // namespace dfmpc::worldmodel
