// What the CUDA tests share: the skip without a GPU and a planner driven
// without a simulator.
#ifndef DFMPC_TESTS_CUDA_CUDA_TESTING_H_
#define DFMPC_TESTS_CUDA_CUDA_TESTING_H_

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <Eigen/Core>
#include <cmath>
#include <string>

#define DFMPC_SKIP_WITHOUT_CUDA()                                       \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

namespace dfmpc::testing {

inline std::string ShippedModel(const std::string& name) {
  return std::string(DFMPC_SHIPPED_MODELS_DIR) + "/" + name + ".pt";
}

// A pendulum observation [cos, sin, angular velocity] at step t of a steady
// rotation: finite, in the training data's range, the same on every device.
inline Eigen::VectorXd PendulumObservation(int t) {
  const double angle = 3.0 - 0.05 * t;
  Eigen::VectorXd observation(3);
  observation << std::cos(angle), std::sin(angle), -2.5;
  return observation;
}

}  // namespace dfmpc::testing

#endif  // DFMPC_TESTS_CUDA_CUDA_TESTING_H_
