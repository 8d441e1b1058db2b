#include "window_outcomes.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
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

struct WindowOutcomes::Windows {
  at::Tensor states;              // [M, features]
  std::vector<int64_t> sequence;  // each window's sequence, counting those with windows
  std::vector<double> means;      // [M]
};

WindowOutcomes::Windows WindowOutcomes::Gather(const std::vector<at::Tensor>& sequences,
                                               const std::vector<at::Tensor>& rewards) const {
  Windows windows{at::Tensor(), {}, WindowMeans(rewards, window_)};
  std::vector<at::Tensor> firsts;
  for (const at::Tensor& tokens : sequences) {
    const int64_t starts = tokens.size(0) - window_ + 1;
    if (starts <= 0) continue;
    firsts.push_back(tokens.narrow(0, 0, starts)
                         .narrow(1, state_feature_, tokens.size(1) - state_feature_)
                         .to(at::kCPU, at::kFloat));
    windows.sequence.insert(windows.sequence.end(), starts,
                            static_cast<int64_t>(firsts.size()) - 1);
  }
  if (!firsts.empty()) windows.states = at::cat(firsts);
  return windows;
}

WindowOutcomes::WindowOutcomes(const std::vector<at::Tensor>& training_sequences,
                               const std::vector<at::Tensor>& training_rewards, int64_t window,
                               int neighbours, int64_t state_feature)
    : window_(window), neighbours_(neighbours), state_feature_(state_feature) {
  if (neighbours < 0) {
    throw std::invalid_argument("WindowOutcomes: the baseline's neighbours must be >= 0, got " +
                                std::to_string(neighbours));
  }
  for (const at::Tensor& tokens : training_sequences) {
    if (state_feature < 0 || state_feature >= tokens.size(1)) {
      throw std::invalid_argument("WindowOutcomes: the state's first feature " +
                                  std::to_string(state_feature) + " is not one of the " +
                                  std::to_string(tokens.size(1)) + " token features");
    }
  }
  const Windows windows = Gather(training_sequences, training_rewards);
  training_means_ = at::tensor(windows.means, at::kDouble);
  for (size_t w = 0; w < windows.sequence.size(); ++w) {
    if (w == 0 || windows.sequence[w] != windows.sequence[w - 1])
      sequence_begin_.push_back(static_cast<int64_t>(w));
  }
  sequence_begin_.push_back(static_cast<int64_t>(windows.sequence.size()));
  if (neighbours > 0) {
    if (sequence_begin_.size() < 3) {
      throw std::invalid_argument(
          "WindowOutcomes: an outcome baseline needs windows of at least two training "
          "sequences");
    }
    std::vector<at::Tensor> tokens;
    for (const at::Tensor& t : training_sequences) tokens.push_back(t.to(at::kCPU, at::kFloat));
    const at::Tensor all =
        at::cat(tokens).narrow(1, state_feature, tokens[0].size(1) - state_feature);
    key_mean_ = all.mean(0);
    key_std_ = all.std(0).clamp_min(1e-6);
    training_keys_ = (windows.states - key_mean_) / key_std_;
  }
  const std::vector<double> outcomes = Outcomes(windows, /*training=*/true);
  sorted_outcomes_ = outcomes;
  std::sort(sorted_outcomes_.begin(), sorted_outcomes_.end());
  training_quantiles_ = Quantiles(outcomes);
}

std::vector<double> WindowOutcomes::Outcomes(const Windows& windows, bool training) const {
  if (neighbours_ == 0 || windows.means.empty()) return windows.means;
  const int64_t sequences = static_cast<int64_t>(sequence_begin_.size()) - 1;
  // A training window's own sequence is no baseline for it.
  const int64_t k = std::min<int64_t>(neighbours_, training ? sequences - 1 : sequences);
  const at::Tensor keys = (windows.states - key_mean_) / key_std_;
  std::vector<double> outcomes = windows.means;
  constexpr int64_t kChunk = 1024;  // query rows per distance matrix
  for (int64_t begin = 0; begin < keys.size(0); begin += kChunk) {
    const int64_t rows = std::min(kChunk, keys.size(0) - begin);
    const at::Tensor distances = at::cdist(keys.narrow(0, begin, rows), training_keys_);
    std::vector<at::Tensor> nearest_distance, nearest_window;
    for (int64_t s = 0; s < sequences; ++s) {
      const int64_t first = sequence_begin_[s];
      const auto [distance, index] =
          distances.narrow(1, first, sequence_begin_[s + 1] - first).min(1);
      nearest_distance.push_back(distance);
      nearest_window.push_back(index + first);
    }
    at::Tensor distance = at::stack(nearest_distance, 1);  // [rows, sequences]
    const at::Tensor nearest = at::stack(nearest_window, 1);
    if (training) {
      const at::Tensor own =
          at::tensor(std::vector<int64_t>(windows.sequence.begin() + begin,
                                          windows.sequence.begin() + begin + rows),
                     at::kLong);
      distance = distance.scatter(1, own.unsqueeze(1), std::numeric_limits<float>::infinity());
    }
    const at::Tensor chosen = nearest.gather(1, std::get<1>(distance.topk(k, 1, false)));
    const at::Tensor baseline =
        training_means_.index_select(0, chosen.flatten()).view({rows, k}).mean(1);
    const double* values = baseline.data_ptr<double>();
    for (int64_t r = 0; r < rows; ++r) outcomes[begin + r] -= values[r];
  }
  return outcomes;
}

std::vector<float> WindowOutcomes::Quantiles(const std::vector<double>& outcomes) const {
  std::vector<float> quantiles;
  const double count = static_cast<double>(sorted_outcomes_.size());
  // A fixed seed: the same data gives the same labels.
  std::mt19937_64 generator(0x5eed);
  for (const double outcome : outcomes) {
    // Windows whose outcomes differ by rounding alone (a running sum) are equal.
    const double tolerance = 1e-9 * std::max(1.0, std::abs(outcome));
    const auto below =
        std::lower_bound(sorted_outcomes_.begin(), sorted_outcomes_.end(), outcome - tolerance);
    const auto not_above = std::upper_bound(below, sorted_outcomes_.end(), outcome + tolerance);
    const auto equal = static_cast<uint64_t>(not_above - below);
    // One of the tie's slots, drawn: labels stay uniform on [0, 1] when many
    // windows share an outcome (a binary reward's all-success windows), so
    // a target inside the tie is a label the model was trained on. A shared
    // mid-rank would leave the labels above the tie's middle unseen.
    double rank = static_cast<double>(below - sorted_outcomes_.begin());
    if (equal > 0) rank += static_cast<double>(generator() % equal) + 0.5;
    quantiles.push_back(static_cast<float>(rank / count));
  }
  return quantiles;
}

std::vector<float> WindowOutcomes::QuantilesOf(const std::vector<at::Tensor>& sequences,
                                               const std::vector<at::Tensor>& rewards) const {
  return Quantiles(Outcomes(Gather(sequences, rewards), /*training=*/false));
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
