// The warm step's latency on a device, with and without CUDA graphs.
#ifndef DFMPC_EXAMPLES_DEVICE_CHECK_PLANNER_LATENCY_H_
#define DFMPC_EXAMPLES_DEVICE_CHECK_PLANNER_LATENCY_H_

#include <Eigen/Core>
#include <string>
#include <vector>

namespace dfmpc::device_check {

struct LatencyRequest {
  std::string model;   // a state model file (the shipped pendulum's)
  std::string device;  // "cpu", "cuda", ...
  int candidates = 8;
  bool cuda_graphs = false;
  int steps = 200;  // timed, after the steps that fill the context ring
};

struct LatencyResult {
  std::vector<double> latencies_ms;  // per timed step
  double graph_replays_per_step = 0.0;
  std::vector<Eigen::VectorXd> actions;  // every step's, the untimed ones too
};

// Warm r = 1 steps (H = 32, K = 16) with the model as its own simulator:
// each step observes the observation the plan predicted for it, so no
// environment is needed and every device sees the same kind of input.
LatencyResult MeasureWarmSteps(const LatencyRequest& request);

}  // namespace dfmpc::device_check

#endif  // DFMPC_EXAMPLES_DEVICE_CHECK_PLANNER_LATENCY_H_
