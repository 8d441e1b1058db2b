#include "weight_signature.h"

#include <c10/core/InferenceMode.h>

namespace dfmpc::worldmodel {

WeightSignature SignatureOf(const std::vector<at::Tensor>& weights) {
  WeightSignature signature;
  signature.reserve(weights.size());
  for (const at::Tensor& weight : weights) {
    signature.emplace_back(weight.data_ptr(), weight._version());
  }
  return signature;
}

bool MemoizableNow(const std::vector<at::Tensor>& weights) {
  if (!c10::InferenceMode::is_enabled()) return false;
  for (const at::Tensor& weight : weights) {
    if (weight.is_inference()) return false;
  }
  return true;
}

}  // namespace dfmpc::worldmodel
