#include "window_outcomes.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dfmpc::worldmodel {
namespace {

// Mean reward of every window of `window` tokens of each sequence, in
// SampleWindows' order.
std::vector<double> WindowMeans(const std::vector<at::Tensor>& rewards, int64_t window) {
  std::vector<double> means;
  for (const at::Tensor& sequence : rewards) {
    const at::Tensor r = sequence.to(at::kCPU, at::kDouble).contiguous();
    const double* values = r.data_ptr<double>();
    const int64_t length = r.size(0);
    if (length < window) continue;  // no window starts here
    double sum = 0.0;
    for (int64_t t = 0; t < window; ++t) sum += values[t];
    means.push_back(sum / window);
    for (int64_t start = 1; start + window <= length; ++start) {
      sum += values[start + window - 1] - values[start - 1];
      means.push_back(sum / window);
    }
  }
  return means;
}

}  // namespace

WindowOutcomes::WindowOutcomes(const std::vector<at::Tensor>& training_rewards, int64_t window)
    : window_(window), sorted_means_(WindowMeans(training_rewards, window)) {
  std::sort(sorted_means_.begin(), sorted_means_.end());
}

std::vector<float> WindowOutcomes::QuantilesOf(const std::vector<at::Tensor>& rewards) const {
  std::vector<float> quantiles;
  const double count = static_cast<double>(sorted_means_.size());
  for (const double mean : WindowMeans(rewards, window_)) {
    // Windows whose means differ by rounding alone (a running sum) are equal.
    const double tolerance = 1e-9 * std::max(1.0, std::abs(mean));
    const auto below =
        std::lower_bound(sorted_means_.begin(), sorted_means_.end(), mean - tolerance);
    const auto not_above = std::upper_bound(below, sorted_means_.end(), mean + tolerance);
    const double rank = (below - sorted_means_.begin()) + 0.5 * (not_above - below);
    quantiles.push_back(static_cast<float>(rank / count));
  }
  return quantiles;
}

void CheckTokenRewards(const std::vector<at::Tensor>& rewards,
                       const std::vector<at::Tensor>& sequences, const std::string& owner,
                       const std::string& what) {
  if (rewards.size() != sequences.size()) {
    throw std::invalid_argument(owner + ": " + std::to_string(rewards.size()) + " " + what +
                                " reward sequences for " + std::to_string(sequences.size()) +
                                " token sequences");
  }
  for (size_t i = 0; i < rewards.size(); ++i) {
    const at::Tensor& r = rewards[i];
    if (!r.defined() || r.dim() != 1 || r.size(0) != sequences[i].size(0)) {
      throw std::invalid_argument(owner + ": " + what + " rewards of sequence " +
                                  std::to_string(i) + " must be [" +
                                  std::to_string(sequences[i].size(0)) + "], one per token");
    }
    if (!at::isfinite(r).all().item<bool>()) {
      throw std::invalid_argument(owner + ": " + what + " rewards of sequence " +
                                  std::to_string(i) + " are not finite");
    }
  }
}

}  // namespace dfmpc::worldmodel
