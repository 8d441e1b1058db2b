#include "conditioning_table.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "dfmpc/worldmodel/device.h"

namespace dfmpc::worldmodel {

at::Tensor ConditioningTable::Gather(const std::vector<int64_t>& token_steps,
                                     const std::vector<at::Tensor>& weights,
                                     const ComputeRows& compute) {
  const std::lock_guard<std::mutex> lock(mutex_);
  WeightSignature signature = SignatureOf(weights);
  if (signature != signature_) {
    signature_ = std::move(signature);
    row_of_step_.clear();
    rows_ = at::Tensor();
    ++generation_;
  }
  std::vector<int64_t> missing;
  for (int64_t step : token_steps) {
    if (row_of_step_.count(step) == 0 &&
        std::find(missing.begin(), missing.end(), step) == missing.end()) {
      missing.push_back(step);
    }
  }
  const at::Device device = weights.front().device();
  if (!missing.empty()) {
    // Computed before any bookkeeping, so that a throw leaves the table as
    // it was.
    const at::Tensor added = compute(ToDevice(at::tensor(missing), device, at::kLong));
    rows_ = rows_.defined() ? at::cat({rows_, added}, 0) : added;
    for (int64_t step : missing) {
      row_of_step_.emplace(step, static_cast<int64_t>(row_of_step_.size()));
    }
  }
  std::vector<int64_t> rows;
  rows.reserve(token_steps.size());
  for (int64_t step : token_steps) rows.push_back(row_of_step_.at(step));
  return rows_.index_select(0, ToDevice(at::tensor(rows), device, at::kLong));
}

int64_t ConditioningTable::generation() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return generation_;
}

}  // namespace dfmpc::worldmodel
