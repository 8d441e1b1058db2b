// Open-loop video rollout throughput on a device, frames decoded.
#ifndef DFMPC_EXAMPLES_DEVICE_CHECK_ROLLOUT_THROUGHPUT_H_
#define DFMPC_EXAMPLES_DEVICE_CHECK_ROLLOUT_THROUGHPUT_H_

#include <string>

namespace dfmpc::device_check {

struct RolloutRequest {
  std::string model;  // a video model file (the shipped pendulum's)
  std::string device;
  bool cuda_graphs = false;
  int context = 16;   // real tokens before the rollout
  int horizon = 256;  // frames generated and decoded
};

struct RolloutResult {
  double frames_per_second = 0.0;
  long long graph_replays = 0;  // in the timed rollout
};

// Three rollouts from the same context (random normalized tokens and
// actions: the cost does not depend on them); two warm up (and capture the
// graphs), the third is timed.
RolloutResult MeasureRollout(const RolloutRequest& request);

}  // namespace dfmpc::device_check

#endif  // DFMPC_EXAMPLES_DEVICE_CHECK_ROLLOUT_THROUGHPUT_H_
