#include "perturbation_parameters.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace dfmpc::envs {

void CheckParameterValue(const ParameterInfo& parameter, double value) {
  const std::string prefix = std::string("perturbation '") + parameter.name + "' ";
  if (!std::isfinite(value)) {
    throw std::invalid_argument(prefix + "must be a finite number, got " + FormatNumber(value));
  }
  switch (parameter.kind) {
    case ParameterKind::kStd:
      if (value < 0.0) {
        throw std::invalid_argument(prefix + "is a std and must be >= 0, got " +
                                    FormatNumber(value));
      }
      break;
    case ParameterKind::kDelay:
      if (value < 0.0 || value > kMaxActionDelay || value != std::floor(value)) {
        throw std::invalid_argument(prefix + "is a whole number of control steps in 0.." +
                                    std::to_string(kMaxActionDelay) + ", got " +
                                    FormatNumber(value));
      }
      break;
    case ParameterKind::kScale:
      if (value <= 0.0) {
        throw std::invalid_argument(prefix + "is a scale and must be > 0, got " +
                                    FormatNumber(value));
      }
      break;
  }
}

std::string FormatNumber(double value) {
  char buffer[32];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

}  // namespace dfmpc::envs
