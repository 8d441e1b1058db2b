#include "env_perturbation.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "observation_noise.h"
#include "perturbation_parameters.h"
#include "random.h"

namespace dfmpc::envs {
namespace {

// Decorrelates the noise key from the task's and the sampling's streams.
constexpr std::uint64_t kNoiseStream = 0x6f62735f6e6f6973ULL;  // "obs_nois"
constexpr int kValueCount = static_cast<int>(kParameters.size());
constexpr int kKeyCount = 2;  // the noise key's two 32-bit halves
constexpr double kTwoTo32 = 4294967296.0;

int ActionCapacity(const PerturbationSpec& spec) {
  ValidatePerturbation(spec);
  return static_cast<int>(spec.delay.high);
}

}  // namespace

EnvPerturbation::EnvPerturbation(const PerturbationSpec& spec,
                                 std::shared_ptr<const mjModel> nominal,
                                 Eigen::VectorXd observation_scale)
    : spec_(spec),
      nominal_(spec.IsNominal()),
      observation_scale_(std::move(observation_scale)),
      model_(nominal),
      delay_(ActionCapacity(spec), nominal->nu) {}

void EnvPerturbation::Reset(std::uint64_t seed) {
  if (nominal_) return;
  Apply(SamplePerturbation(spec_, seed), SplitMix64(seed ^ kNoiseStream));
  delay_.Reset(values_.delay);
}

void EnvPerturbation::Apply(const Perturbation& values, std::uint64_t noise_key) {
  model_.Apply(values);
  values_ = values;
  noise_key_ = noise_key;
  const double relative = values.obs_noise_rel;
  noise_stds_ =
      (values.obs_noise * values.obs_noise + (relative * observation_scale_.array()).square())
          .sqrt()
          .matrix();
  if ((noise_stds_.array() == 0.0).all()) noise_stds_.resize(0);
}

void EnvPerturbation::AddNoise(int step, Eigen::Ref<Eigen::VectorXd> observation) const {
  if (noise_stds_.size() > 0) AddObservationNoise(noise_key_, step, noise_stds_, observation);
}

int EnvPerturbation::state_size() const {
  return nominal_ ? 0 : kValueCount + kKeyCount + delay_.state_size();
}

void EnvPerturbation::Pack(Eigen::VectorXd* state, int* offset) const {
  if (nominal_) return;
  const std::vector<double> values = PerturbationValues(values_);
  state->segment(*offset, kValueCount) =
      Eigen::Map<const Eigen::VectorXd>(values.data(), kValueCount);
  (*state)[*offset + kValueCount] = static_cast<double>(noise_key_ >> 32);
  (*state)[*offset + kValueCount + 1] = static_cast<double>(noise_key_ & 0xFFFFFFFFULL);
  *offset += kValueCount + kKeyCount;
  delay_.Pack(state, offset);
}

void EnvPerturbation::Unpack(const Eigen::VectorXd& state, int* offset) {
  if (nominal_) return;
  const Eigen::VectorXd entries = state.segment(*offset, kValueCount);
  Perturbation values;
  try {
    values = PerturbationFromValues(std::vector<double>(entries.begin(), entries.end()));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("state: ") + e.what());
  }
  if (values.delay > spec_.delay.high) {
    throw std::invalid_argument("state: delay " + std::to_string(values.delay) +
                                " exceeds the spec's longest, " +
                                std::to_string(static_cast<int>(spec_.delay.high)));
  }
  std::uint64_t noise_key = 0;
  for (int half = 0; half < kKeyCount; ++half) {
    const double bits = state[*offset + kValueCount + half];
    if (bits < 0.0 || bits >= kTwoTo32 || bits != std::floor(bits)) {
      throw std::invalid_argument("state: the observation noise key is invalid");
    }
    noise_key = (noise_key << 32) | static_cast<std::uint64_t>(bits);
  }
  *offset += kValueCount + kKeyCount;
  Apply(values, noise_key);
  delay_.Unpack(state, offset, values.delay);
}

}  // namespace dfmpc::envs
