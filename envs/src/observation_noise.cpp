#include "observation_noise.h"

#include "random.h"

namespace dfmpc::envs {
namespace {

// Output n of a SplitMix64 generator seeded with `key`, as a uniform in [0, 1).
double CounterUniform(std::uint64_t key, std::uint64_t n) {
  return UnitInterval(SplitMix64(key + n * 0x9E3779B97F4A7C15ULL));
}

}  // namespace

void AddObservationNoise(std::uint64_t key, int step, const Eigen::VectorXd& stds,
                         Eigen::Ref<Eigen::VectorXd> observation) {
  const std::uint64_t size = static_cast<std::uint64_t>(observation.size());
  for (std::uint64_t i = 0; i < size; ++i) {
    const std::uint64_t n = static_cast<std::uint64_t>(step) * size + i;
    observation[i] +=
        stds[i] * NormalFromUniforms(CounterUniform(key, 2 * n), CounterUniform(key, 2 * n + 1));
  }
}

}  // namespace dfmpc::envs
