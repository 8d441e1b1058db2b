// The outcome of a training window (internal to the world model), expressed
// as its quantile among every window of the training sequences, so that the
// condition a model learns (transformer.h, outcome_input) is uniform on
// [0, 1] whatever the task's reward scale, and a planner's target reads the
// same on every task (0.9: as good as the best tenth of the data's windows).
//
// The outcome is the window's mean reward or, with a baseline of
// `neighbours` > 0, its advantage: the mean reward less the mean of the
// windows that other sequences began nearest to the same state (the
// nearest window of each other sequence, then the `neighbours` nearest of
// those). Without the baseline, where a window starts decides most of its
// mean reward, not what its actions do there.
#ifndef DFMPC_WORLDMODEL_SRC_WINDOW_OUTCOMES_H_
#define DFMPC_WORLDMODEL_SRC_WINDOW_OUTCOMES_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::worldmodel {

class WindowOutcomes {
 public:
  // `training_sequences`: tokens [T_i, d]; `training_rewards`: per-token
  // rewards [T_i]. A window's state is its first token's features from
  // `state_feature` on. A baseline needs windows in at least two sequences.
  WindowOutcomes(const std::vector<at::Tensor>& training_sequences,
                 const std::vector<at::Tensor>& training_rewards, int64_t window, int neighbours,
                 int64_t state_feature = 0);

  // The quantile of every training window (sequence by sequence, start by
  // start: the order SampleWindows numbers them in): (windows below + j +
  // 1/2) / windows, j drawn from 0 .. (windows equal) - 1, so that tied
  // windows spread over the quantiles they share (a constant outcome gives
  // labels all over [0, 1], and no information).
  const std::vector<float>& training_quantiles() const { return training_quantiles_; }

  // The quantiles of the windows of other sequences (validation), in the
  // same order, among the training windows (ties drawn alike, and a window
  // equal to none: windows below / windows); their baselines come from
  // every training sequence.
  std::vector<float> QuantilesOf(const std::vector<at::Tensor>& sequences,
                                 const std::vector<at::Tensor>& rewards) const;

 private:
  struct Windows;  // the states, sequences and mean rewards of windows
  Windows Gather(const std::vector<at::Tensor>& sequences,
                 const std::vector<at::Tensor>& rewards) const;
  // Each window's outcome: its mean reward, less its baseline if any.
  std::vector<double> Outcomes(const Windows& windows, bool training) const;
  std::vector<float> Quantiles(const std::vector<double>& outcomes) const;

  int64_t window_;
  int neighbours_;
  int64_t state_feature_;
  at::Tensor key_mean_, key_std_;        // of the training tokens, to scale the keys
  at::Tensor training_keys_;             // [N, features] scaled states
  at::Tensor training_means_;            // [N] mean rewards (double)
  std::vector<int64_t> sequence_begin_;  // each training sequence's first window, then N
  std::vector<double> sorted_outcomes_;  // the training windows'
  std::vector<float> training_quantiles_;
};

// Throws std::invalid_argument, "<owner>: ...", unless `rewards` holds one
// finite float [T_i] tensor per sequence of `sequences` ([T_i, d]). `what`
// names the split ("training", "validation").
void CheckTokenRewards(const std::vector<at::Tensor>& rewards,
                       const std::vector<at::Tensor>& sequences, const std::string& owner,
                       const std::string& what);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_WINDOW_OUTCOMES_H_
