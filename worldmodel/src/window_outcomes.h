// The outcome of a training window (internal to the world model): the mean
// reward of its tokens, expressed as its quantile among every window of the
// training sequences, so that the condition a model learns (transformer.h,
// outcome_input) is uniform on [0, 1] whatever the task's reward scale, and
// a planner's target reads the same on every task (0.9: as good as the
// best tenth of the data's windows).
#ifndef DFMPC_WORLDMODEL_SRC_WINDOW_OUTCOMES_H_
#define DFMPC_WORLDMODEL_SRC_WINDOW_OUTCOMES_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::worldmodel {

class WindowOutcomes {
 public:
  // `training_rewards`: per-token rewards [T_i] of the training sequences;
  // every sequence holds at least `window` tokens.
  WindowOutcomes(const std::vector<at::Tensor>& training_rewards, int64_t window);

  // The quantile of every window of `rewards` (sequence by sequence, start
  // by start: the order SampleWindows numbers them in) among the training
  // windows: (windows below + half the windows equal) / windows. A
  // constant reward gives 0.5 everywhere.
  std::vector<float> QuantilesOf(const std::vector<at::Tensor>& rewards) const;

 private:
  int64_t window_;
  std::vector<double> sorted_means_;  // the training windows' mean rewards
};

// Throws std::invalid_argument, "<owner>: ...", unless `rewards` holds one
// finite float [T_i] tensor per sequence of `sequences` ([T_i, d]). `what`
// names the split ("training", "validation").
void CheckTokenRewards(const std::vector<at::Tensor>& rewards,
                       const std::vector<at::Tensor>& sequences, const std::string& owner,
                       const std::string& what);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_WINDOW_OUTCOMES_H_
