// A small seeded random source whose draws are identical on every platform
// (the std:: distributions are implementation-defined; these are not).
#ifndef DFMPC_ENVS_SRC_RANDOM_H_
#define DFMPC_ENVS_SRC_RANDOM_H_

#include <cstdint>
#include <random>

namespace dfmpc::envs {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double Uniform();
  // Uniform in [lower, upper).
  double Uniform(double lower, double upper) { return lower + (upper - lower) * Uniform(); }
  // Standard normal (Box-Muller, one draw per call).
  double Normal();
  std::uint64_t Next() { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_RANDOM_H_
