// What inference-time memos of values derived from weights (internal to the
// world model) key on, and when they may be used.
#ifndef DFMPC_WORLDMODEL_SRC_WEIGHT_SIGNATURE_H_
#define DFMPC_WORLDMODEL_SRC_WEIGHT_SIGNATURE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace dfmpc::worldmodel {

// Each weight's storage and version counter: an optimizer step, a loaded
// checkpoint or to() changes one of them.
using WeightSignature = std::vector<std::pair<const void*, uint32_t>>;
WeightSignature SignatureOf(const std::vector<at::Tensor>& weights);

// Whether values derived from `weights` may be memoized now: InferenceMode
// is on (so nothing needs their autograd history) and no weight is an
// inference tensor (those have no version counter, so an in-place update
// could not be seen).
bool MemoizableNow(const std::vector<at::Tensor>& weights);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_WEIGHT_SIGNATURE_H_
