#include "real_token.h"

#include <ATen/ATen.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dfmpc/worldmodel/device.h"

namespace dfmpc::planner {
namespace {

Eigen::VectorXd ToEigenVector(const at::Tensor& vector) {
  const at::Tensor cpu = vector.to(at::kCPU, at::kDouble).contiguous();
  return Eigen::Map<const Eigen::VectorXd>(cpu.data_ptr<double>(), cpu.numel());
}

}  // namespace

RealTokenBuilder::RealTokenBuilder(const worldmodel::TokenLayout& layout,
                                   const worldmodel::Normalizer& normalizer, std::string task)
    : layout_(layout),
      mean_(ToEigenVector(normalizer.mean())),
      scale_(ToEigenVector(normalizer.scale())),
      task_(std::move(task)) {
  if (mean_.size() != layout.token_dim()) {
    throw std::invalid_argument("planner: the normalizer has " + std::to_string(mean_.size()) +
                                " features, the token layout " +
                                std::to_string(layout.token_dim()));
  }
}

void RealTokenBuilder::Check(const Eigen::VectorXd& observation) const {
  if (observation.size() != layout_.observation_dim) {
    throw std::invalid_argument("planner: observation has " + std::to_string(observation.size()) +
                                " entries, the " + task_ + " model expects " +
                                std::to_string(layout_.observation_dim));
  }
  if (!observation.allFinite()) {
    throw std::invalid_argument("planner: observation contains NaN or infinite values");
  }
  const int offset = layout_.observation_offset();
  for (int i = 0; i < layout_.observation_dim; ++i) {
    const double z = (observation(i) - mean_(offset + i)) / scale_(offset + i);
    if (!(std::abs(z) <= kMaxNormalized)) {
      std::ostringstream message;
      message << "planner: observation feature " << i << " = " << observation(i) << " lies "
              << std::abs(z) << " standard deviations from the " << task_
              << " model's training data (at most " << kMaxNormalized << " are accepted)";
      throw std::invalid_argument(message.str());
    }
  }
}

at::Tensor RealTokenBuilder::Build(const Eigen::VectorXd& action,
                                   const Eigen::VectorXd& observation,
                                   const Eigen::VectorXd& previous,
                                   const at::Device& device) const {
  Eigen::VectorXd token(layout_.token_dim());
  token.head(layout_.action_dim) = action;
  token.segment(layout_.observation_offset(), layout_.observation_dim) = observation;
  if (layout_.observation_deltas) {
    token.segment(layout_.delta_offset(), layout_.observation_dim) = observation - previous;
  }
  const Eigen::VectorXd normalized =
      ((token - mean_).array() / scale_.array()).cwiseMax(-kMaxNormalized).cwiseMin(kMaxNormalized);
  const std::vector<float> values(normalized.data(), normalized.data() + normalized.size());
  return worldmodel::ToDevice(at::tensor(values, at::kFloat).view({1, 1, -1}), device, at::kFloat);
}

}  // namespace dfmpc::planner
