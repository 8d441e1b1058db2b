// The text form of perturbation specs: parsing, merging and formatting.
#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/perturbation.h"
#include "perturbation_parameters.h"

namespace dfmpc::envs {
namespace {

std::string Trim(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') - begin + 1);
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(separator, begin);
    parts.push_back(Trim(text.substr(begin, end - begin)));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

// The index of the parameter called `name`; throws listing the known ones.
std::size_t FindParameter(const std::string& name) {
  for (std::size_t i = 0; i < kParameters.size(); ++i) {
    if (name == kParameters[i].name) return i;
  }
  std::string known;
  for (const std::string& known_name : PerturbationNames()) {
    known += (known.empty() ? "" : ", ") + known_name;
  }
  throw std::invalid_argument("unknown perturbation parameter '" + name + "' (known: " + known +
                              ")");
}

double ParseNumber(const ParameterInfo& parameter, const std::string& text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const std::from_chars_result result = std::from_chars(text.data(), end, value);
  if (text.empty() || result.ec != std::errc() || result.ptr != end) {
    throw std::invalid_argument(std::string("perturbation '") + parameter.name + "': '" + text +
                                "' is not a number");
  }
  return value;
}

PerturbationRange ParseRange(const ParameterInfo& parameter, const std::string& text) {
  const std::vector<std::string> bounds = Split(text, ':');
  if (bounds.size() > 2) {
    throw std::invalid_argument(std::string("perturbation '") + parameter.name + "': '" + text +
                                "' is neither a value nor a range low:high");
  }
  const double low = ParseNumber(parameter, bounds.front());
  return {low, bounds.size() == 2 ? ParseNumber(parameter, bounds.back()) : low};
}

std::string FormatRange(const PerturbationRange& range) {
  return range.fixed() ? FormatNumber(range.low)
                       : FormatNumber(range.low) + ":" + FormatNumber(range.high);
}

bool IsDefault(const ParameterInfo& parameter, const PerturbationRange& range) {
  return range.low == parameter.nominal && range.high == parameter.nominal;
}

}  // namespace

PerturbationSpec ParsePerturbation(const std::string& text) {
  PerturbationSpec spec;
  if (Trim(text).empty()) return spec;
  std::vector<bool> given(kParameters.size(), false);
  for (const std::string& entry : Split(text, ',')) {
    const std::size_t equals = entry.find('=');
    const std::string name = Trim(entry.substr(0, equals));
    if (name.empty()) {
      throw std::invalid_argument("perturbation '" + text + "' has an entry without a name ('" +
                                  entry + "'); write name=value or name=low:high");
    }
    const std::size_t index = FindParameter(name);
    const ParameterInfo& parameter = kParameters[index];
    if (equals == std::string::npos) {
      throw std::invalid_argument("perturbation '" + name +
                                  "' has no value; write name=value or name=low:high");
    }
    if (given[index]) throw std::invalid_argument("perturbation '" + name + "' is given twice");
    given[index] = true;
    spec.*parameter.range = ParseRange(parameter, Trim(entry.substr(equals + 1)));
  }
  ValidatePerturbation(spec);
  return spec;
}

PerturbationSpec MergePerturbations(const PerturbationSpec& fixed,
                                    const PerturbationSpec& randomized) {
  ValidatePerturbation(fixed);
  ValidatePerturbation(randomized);
  PerturbationSpec merged = randomized;
  for (const ParameterInfo& parameter : kParameters) {
    const PerturbationRange& value = fixed.*parameter.range;
    const std::string name = std::string("perturbation '") + parameter.name + "'";
    if (!value.fixed()) {
      throw std::invalid_argument(name + ": a fixed perturbation takes one value, got the range " +
                                  FormatRange(value) + " (ranges are for randomization)");
    }
    if (IsDefault(parameter, value)) continue;
    if (!IsDefault(parameter, randomized.*parameter.range)) {
      throw std::invalid_argument(name + " is both fixed and randomized; give it one or the other");
    }
    merged.*parameter.range = value;
  }
  return merged;
}

std::string FormatPerturbation(const PerturbationSpec& spec) {
  std::string text;
  for (const ParameterInfo& parameter : kParameters) {
    const PerturbationRange& range = spec.*parameter.range;
    if (IsDefault(parameter, range)) continue;
    text += (text.empty() ? "" : ",") + std::string(parameter.name) + "=" + FormatRange(range);
  }
  return text;
}

std::string FormatPerturbation(const Perturbation& perturbation) {
  PerturbationSpec fixed;
  const std::vector<double> values = PerturbationValues(perturbation);
  for (std::size_t i = 0; i < kParameters.size(); ++i) {
    fixed.*kParameters[i].range = {values[i], values[i]};
  }
  return FormatPerturbation(fixed);
}

}  // namespace dfmpc::envs
