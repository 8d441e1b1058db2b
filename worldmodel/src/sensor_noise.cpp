#include "dfmpc/worldmodel/sensor_noise.h"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace dfmpc::worldmodel {
namespace {

std::vector<double> Segment(const at::Tensor& values, int offset, int count) {
  const at::Tensor part = values.narrow(0, offset, count).to(at::kDouble).contiguous();
  return std::vector<double>(part.data_ptr<double>(), part.data_ptr<double>() + count);
}

bool AllPositive(const std::vector<double>& values) {
  for (double v : values) {
    if (!(v > 0.0 && std::isfinite(v))) return false;
  }
  return true;
}

}  // namespace

void SensorNoise::Validate() const {
  if (!(max_std >= 0.0 && std::isfinite(max_std))) {
    throw std::invalid_argument("sensor noise std must be finite and >= 0, got " +
                                std::to_string(max_std));
  }
  if (!enabled()) return;
  if (observation_scale.empty() || !AllPositive(observation_scale) || !AllPositive(delta_scale) ||
      (!delta_scale.empty() && delta_scale.size() != observation_scale.size())) {
    throw std::invalid_argument("sensor noise needs a positive scale for every feature");
  }
}

SensorNoise MakeSensorNoise(const TokenLayout& layout, const Normalizer& normalizer,
                            double max_std) {
  if (normalizer.dim() != layout.token_dim()) {
    throw std::invalid_argument("MakeSensorNoise: the normalizer has " +
                                std::to_string(normalizer.dim()) + " features, the layout " +
                                std::to_string(layout.token_dim()));
  }
  SensorNoise noise;
  noise.max_std = max_std;
  noise.observation_offset = layout.observation_offset();
  noise.observation_scale =
      Segment(normalizer.scale(), layout.observation_offset(), layout.observation_dim);
  if (layout.observation_deltas) {
    noise.delta_offset = layout.delta_offset();
    noise.delta_scale = Segment(normalizer.scale(), layout.delta_offset(), layout.observation_dim);
  }
  noise.Validate();
  return noise;
}

at::Tensor AddSensorNoise(const SensorNoise& noise, const at::Tensor& windows,
                          const at::Tensor& stds, at::Generator& gen) {
  const int64_t count = windows.size(0);
  const int64_t length = windows.size(1);
  const int64_t dim = static_cast<int64_t>(noise.observation_scale.size());
  const at::Tensor raw =
      at::randn({count, length + 1, dim}, gen, at::kFloat) * stds.to(at::kFloat).view({-1, 1, 1});
  const at::Tensor current = raw.narrow(1, 1, length);
  at::Tensor noisy = windows.clone();
  noisy.narrow(2, noise.observation_offset, dim)
      .add_(current / at::tensor(noise.observation_scale, at::kFloat));
  if (!noise.delta_scale.empty()) {
    const at::Tensor change = current - raw.narrow(1, 0, length);
    noisy.narrow(2, noise.delta_offset, dim)
        .add_(change / at::tensor(noise.delta_scale, at::kFloat));
  }
  return noisy;
}

}  // namespace dfmpc::worldmodel
