#include "transposed_weights.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/activation.h>

#include <utility>

#include "bf16_rows.h"
#include "dfmpc/worldmodel/aten_kernels.h"

namespace dfmpc::worldmodel {
namespace {

// x's leading sizes with `columns` last.
std::vector<int64_t> RowSizes(const at::Tensor& x, int64_t columns) {
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = columns;
  return sizes;
}

// ATen's form of a bfloat16 product (AtenKernels): ATen's conversions and
// the bias added in bfloat16; [n, out], bfloat16.
at::Tensor AtenBf16Product(const at::Tensor& rows, const LinearCopy& copy) {
  const at::Tensor out = at::mm(rows.to(at::kBFloat16), copy.weight);
  return copy.bias.defined() ? out.add_(copy.aten_bias) : out;
}

// rows [n, in] (any floating dtype) times a bfloat16 copy plus its float
// bias: [n, out], float. The bias is added while widening the product
// (bf16_rows.h).
at::Tensor Bf16Product(const at::Tensor& rows, const LinearCopy& copy) {
  if (AtenKernels::on()) return AtenBf16Product(rows, copy).to(at::kFloat);
  return WidenPlusBias(at::mm(RoundToBf16(rows.to(at::kFloat)), copy.weight), copy.bias);
}

bool IsBf16(const LinearCopy& copy) {
  return copy.weight.defined() && copy.weight.scalar_type() == at::kBFloat16;
}

// Every weight and bias of `layers`, in order.
std::vector<at::Tensor> LinearTensors(const std::vector<torch::nn::Linear>& layers) {
  std::vector<at::Tensor> tensors;
  for (const torch::nn::Linear& layer : layers) {
    tensors.push_back(layer->weight);
    if (layer->bias.defined()) tensors.push_back(layer->bias);
  }
  return tensors;
}

}  // namespace

TransposedWeights::TransposedWeights(std::vector<torch::nn::Linear> layers)
    : layers_(std::move(layers)), tensors_(LinearTensors(layers_)) {}

std::vector<LinearCopy> TransposedWeights::Get(at::ScalarType dtype) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Memo& memo = dtype == at::kBFloat16 ? bf16_ : float_;
  WeightSignature signature = SignatureOf(tensors_);
  if (signature != memo.signature) {
    std::vector<LinearCopy> copies;
    copies.reserve(layers_.size());
    for (const torch::nn::Linear& layer : layers_) {
      const at::Tensor& bias = layer->bias;
      LinearCopy copy;
      copy.weight = layer->weight.t().contiguous().to(dtype);
      if (bias.defined()) {
        copy.bias = bias.to(at::kFloat);
        copy.aten_bias = bias.to(dtype);
      }
      copies.push_back(std::move(copy));
    }
    // Assigned only once every copy exists, so a throw leaves the memo whole.
    memo.copies = std::move(copies);
    memo.signature = std::move(signature);
  }
  return memo.copies;
}

at::Tensor LinearThrough(torch::nn::Linear& layer, const at::Tensor& x, const LinearCopy& copy) {
  if (!copy.weight.defined()) return layer(x);
  const std::vector<int64_t> sizes = RowSizes(x, copy.weight.size(1));
  const at::Tensor rows = x.reshape({-1, x.size(-1)});
  if (IsBf16(copy)) return Bf16Product(rows, copy).to(x.scalar_type()).view(sizes);
  return (copy.bias.defined() ? at::addmm(copy.bias, rows, copy.weight) : at::mm(rows, copy.weight))
      .view(sizes);
}

at::Tensor MlpThrough(torch::nn::Linear& fc1, torch::nn::Linear& fc2, const at::Tensor& x,
                      const LinearCopy& copy1, const LinearCopy& copy2) {
  if (!IsBf16(copy1) || !IsBf16(copy2)) {
    return LinearThrough(fc2, torch::nn::functional::gelu(LinearThrough(fc1, x, copy1)), copy2);
  }
  const at::Tensor rows = x.reshape({-1, x.size(-1)});
  at::Tensor hidden;
  if (AtenKernels::on()) {  // the bias added and the activation applied in bfloat16
    hidden = at::gelu(AtenBf16Product(rows, copy1));
  } else {
    hidden = Bf16Product(rows, copy1);
    at::gelu_(hidden);
  }
  return Bf16Product(hidden, copy2).to(x.scalar_type()).view(RowSizes(x, copy2.weight.size(1)));
}

}  // namespace dfmpc::worldmodel
