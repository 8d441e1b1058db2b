#include "random.h"

#include <cmath>

namespace dfmpc::envs {

double Rng::Uniform() {
  return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

double Rng::Normal() {
  constexpr double kTwoPi = 6.28318530717958647692;
  const double u1 = 1.0 - Uniform();  // (0, 1]
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace dfmpc::envs
