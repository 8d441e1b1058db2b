#include "dfmpc/envs/perturbation.h"

#include <cmath>
#include <stdexcept>

#include "perturbation_parameters.h"
#include "random.h"

namespace dfmpc::envs {
namespace {

// Decorrelates the perturbation's stream from the task's, which is seeded
// with the episode seed itself.
constexpr std::uint64_t kSamplingStream = 0x70657274757262ULL;  // "perturb"

std::vector<double> NominalValues() {
  std::vector<double> values;
  for (const ParameterInfo& parameter : kParameters) values.push_back(parameter.nominal);
  return values;
}

}  // namespace

bool Perturbation::IsNominal() const { return PerturbationValues(*this) == NominalValues(); }

bool PerturbationSpec::IsNominal() const {
  for (const ParameterInfo& parameter : kParameters) {
    const PerturbationRange& range = this->*parameter.range;
    if (range.low != parameter.nominal || range.high != parameter.nominal) return false;
  }
  return true;
}

const std::vector<std::string>& PerturbationNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const ParameterInfo& parameter : kParameters) list.emplace_back(parameter.name);
    return list;
  }();
  return names;
}

std::string DescribePerturbationParameters() {
  std::string text;
  for (const ParameterInfo& parameter : kParameters) {
    std::string name = parameter.name;
    name.resize(15, ' ');
    text +=
        "  " + name + parameter.meaning + " (default " + FormatNumber(parameter.nominal) + ")\n";
  }
  return text;
}

std::vector<double> PerturbationValues(const Perturbation& p) {
  return {p.obs_noise, p.obs_noise_rel, static_cast<double>(p.delay), p.gain, p.mass,
          p.damping,   p.friction};
}

Perturbation PerturbationFromValues(const std::vector<double>& values) {
  if (values.size() != kParameters.size()) {
    throw std::invalid_argument("a perturbation has " + std::to_string(kParameters.size()) +
                                " values, got " + std::to_string(values.size()));
  }
  for (std::size_t i = 0; i < values.size(); ++i) CheckParameterValue(kParameters[i], values[i]);
  Perturbation p;
  p.obs_noise = values[0];
  p.obs_noise_rel = values[1];
  p.delay = static_cast<int>(values[2]);
  p.gain = values[3];
  p.mass = values[4];
  p.damping = values[5];
  p.friction = values[6];
  return p;
}

void ValidatePerturbation(const PerturbationSpec& spec) {
  for (const ParameterInfo& parameter : kParameters) {
    const PerturbationRange& range = spec.*parameter.range;
    CheckParameterValue(parameter, range.low);
    CheckParameterValue(parameter, range.high);
    if (range.low > range.high) {
      throw std::invalid_argument(std::string("perturbation '") + parameter.name + "': range " +
                                  FormatNumber(range.low) + ":" + FormatNumber(range.high) +
                                  " has low > high");
    }
  }
}

Perturbation SamplePerturbation(const PerturbationSpec& spec, std::uint64_t seed) {
  ValidatePerturbation(spec);
  Rng rng(SplitMix64(seed ^ kSamplingStream));
  std::vector<double> values;
  for (const ParameterInfo& parameter : kParameters) {
    const PerturbationRange& range = spec.*parameter.range;
    if (range.fixed()) {
      values.push_back(range.low);
    } else if (parameter.kind == ParameterKind::kDelay) {
      const double count = range.high - range.low + 1.0;  // whole numbers in the range
      values.push_back(range.low + std::floor(rng.Uniform() * count));
    } else {
      values.push_back(rng.Uniform(range.low, range.high));
    }
  }
  return PerturbationFromValues(values);
}

}  // namespace dfmpc::envs
