#include "random.h"

#include <cmath>

namespace dfmpc::envs {

std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

double UnitInterval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

double NormalFromUniforms(double u, double v) {
  constexpr double kTwoPi = 6.28318530717958647692;
  return std::sqrt(-2.0 * std::log(1.0 - u)) * std::cos(kTwoPi * v);  // 1 - u in (0, 1]
}

double Rng::Uniform() { return UnitInterval(engine_()); }

double Rng::Normal() {
  const double u = Uniform();
  return NormalFromUniforms(u, Uniform());
}

}  // namespace dfmpc::envs
