#include "training_windows.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <stdexcept>

#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::worldmodel {

void CheckWindowTrainingSettings(const WindowTrainingSettings& s, const std::string& owner) {
  const auto require = [&owner](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(owner + ": " + what);
  };
  s.optimizer.Validate(owner);
  require(s.window >= 1, "window must be >= 1");
  require(s.ema_decay >= 0 && s.ema_decay < 1, "EMA decay must be in [0, 1)");
  require(s.clean_prob >= 0 && s.clean_prob < 1, "clean probability must be in [0, 1)");
  require(s.pyramid_prob >= 0 && s.pyramid_prob <= 1, "pyramid probability must be in [0, 1]");
  require(s.known_action_prob >= 0 && s.known_action_prob <= 1,
          "known-action probability must be in [0, 1]");
}

void CheckTokenSequences(const std::vector<at::Tensor>& sequences, int64_t token_dim,
                         int64_t window, const std::string& owner, const std::string& what) {
  if (sequences.empty()) {
    throw std::invalid_argument(owner + ": no " + what + " sequences");
  }
  for (const at::Tensor& s : sequences) {
    if (s.dim() != 2 || s.size(1) != token_dim) {
      throw std::invalid_argument(owner + ": " + what + " sequences must be [T, " +
                                  std::to_string(token_dim) + "]");
    }
    if (s.size(0) < window) {
      throw std::invalid_argument(owner + ": a " + what + " sequence has " +
                                  std::to_string(s.size(0)) + " tokens, fewer than the window " +
                                  std::to_string(window));
    }
    if (!at::isfinite(s).all().item<bool>()) {
      throw std::invalid_argument(owner + ": " + what + " data contains NaN or infinite values");
    }
  }
}

at::Tensor SampleWindows(const std::vector<at::Tensor>& sequences, int64_t window, int64_t count,
                         at::Generator& gen, std::vector<int64_t>* picks) {
  std::vector<int64_t> first_start(sequences.size() + 1, 0);
  for (size_t i = 0; i < sequences.size(); ++i) {
    first_start[i + 1] = first_start[i] + sequences[i].size(0) - window + 1;
  }
  const at::Tensor drawn = at::randint(first_start.back(), {count}, gen, at::kLong);
  std::vector<at::Tensor> windows;
  windows.reserve(count);
  if (picks != nullptr) picks->clear();
  for (int64_t b = 0; b < count; ++b) {
    const int64_t pick = drawn[b].item<int64_t>();
    if (picks != nullptr) picks->push_back(pick);
    const size_t i =
        std::upper_bound(first_start.begin(), first_start.end(), pick) - first_start.begin() - 1;
    windows.push_back(sequences[i].narrow(0, pick - first_start[i], window));
  }
  return at::stack(windows);
}

void UpdateEma(DfTransformerImpl& ema, DfTransformerImpl& model, double decay, int step) {
  const double rate = std::min(decay, (1.0 + step) / (10.0 + step));
  torch::NoGradGuard no_grad;
  const auto source = model.parameters();
  auto target = ema.parameters();
  for (size_t i = 0; i < source.size(); ++i) target[i].mul_(rate).add_(source[i], 1 - rate);
}

void CopyWeights(DfTransformerImpl& from, DfTransformerImpl& to) {
  torch::NoGradGuard no_grad;
  const auto source = from.parameters();
  auto target = to.parameters();
  for (size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
}

}  // namespace dfmpc::worldmodel
