// A small seeded random source whose draws are identical on every platform
// (the std:: distributions are implementation-defined; these are not), and
// SplitMix64 for counter-based draws and derived seeds.
#ifndef DFMPC_ENVS_SRC_RANDOM_H_
#define DFMPC_ENVS_SRC_RANDOM_H_

#include <cstdint>
#include <random>

namespace dfmpc::envs {

// SplitMix64's output function of `x`: a bijective mix whose outputs for
// consecutive inputs pass as independent uniform 64-bit draws.
std::uint64_t SplitMix64(std::uint64_t x);
// A uniform double in [0, 1) from the top 53 bits of `bits`.
double UnitInterval(std::uint64_t bits);
// A standard normal from two uniforms in [0, 1) (Box-Muller, one output).
double NormalFromUniforms(double u, double v);

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
