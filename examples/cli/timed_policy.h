// A policy whose every Act is timed, for the latency columns of `eval` and
// `control`: the dfmpc planner and the learned-dynamics MPPI peer.
#ifndef DFMPC_EXAMPLES_CLI_TIMED_POLICY_H_
#define DFMPC_EXAMPLES_CLI_TIMED_POLICY_H_

#include <cstdint>
#include <vector>

#include "dfmpc/envs/policy.h"

namespace dfmpc::cli {

// Cost of one control step.
struct StepRecord {
  double latency_ms = 0.0;
  // Tokens the model predicted: token-forwards of the transformer, one-step
  // predictions (per candidate and step) of an MLP rollout.
  std::int64_t token_forwards = 0;
  int calls = 0;  // sequential model calls
};

class TimedPolicy : public envs::Policy {
 public:
  // Physics steps per control step the model was trained at.
  virtual int action_repeat() const = 0;
  // Every Act since construction; latency is the Act's own wall time.
  const std::vector<StepRecord>& records() const { return records_; }
  // Wall time of every Reset since construction: the planner makes its
  // first plan there, before the control loop starts.
  const std::vector<double>& reset_ms() const { return reset_ms_; }

 protected:
  std::vector<StepRecord> records_;
  std::vector<double> reset_ms_;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TIMED_POLICY_H_
