#include "dfmpc/task/tolerance.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dfmpc::task {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool HasFiniteSupport(Sigmoid sigmoid) {
  return sigmoid == Sigmoid::kCosine || sigmoid == Sigmoid::kLinear ||
         sigmoid == Sigmoid::kQuadratic;
}

void CheckValueAtMargin(Sigmoid sigmoid, double value_at_margin) {
  const bool ok = HasFiniteSupport(sigmoid) ? (value_at_margin >= 0.0 && value_at_margin < 1.0)
                                            : (value_at_margin > 0.0 && value_at_margin < 1.0);
  if (!ok) {
    throw std::invalid_argument("tolerance: value_at_margin " + std::to_string(value_at_margin) +
                                " is out of range for this sigmoid");
  }
}

}  // namespace

const std::vector<std::string>& SigmoidNames() {
  static const std::vector<std::string> names = {"gaussian",   "hyperbolic",  "long_tail",
                                                 "reciprocal", "cosine",      "linear",
                                                 "quadratic",  "tanh_squared"};
  return names;
}

Sigmoid ParseSigmoid(const std::string& name) {
  const std::vector<std::string>& names = SigmoidNames();
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) throw std::invalid_argument("unknown sigmoid '" + name + "'");
  return static_cast<Sigmoid>(found - names.begin());
}

double SigmoidValue(double x, Sigmoid sigmoid, double value_at_margin) {
  CheckValueAtMargin(sigmoid, value_at_margin);
  const double v = value_at_margin;
  switch (sigmoid) {
    case Sigmoid::kGaussian: {
      const double scale = std::sqrt(-2.0 * std::log(v));
      return std::exp(-0.5 * (x * scale) * (x * scale));
    }
    case Sigmoid::kHyperbolic:
      return 1.0 / std::cosh(x * std::acosh(1.0 / v));
    case Sigmoid::kLongTail: {
      const double scaled = x * std::sqrt(1.0 / v - 1.0);
      return 1.0 / (scaled * scaled + 1.0);
    }
    case Sigmoid::kReciprocal:
      return 1.0 / (std::abs(x) * (1.0 / v - 1.0) + 1.0);
    case Sigmoid::kCosine: {
      const double scaled = x * std::acos(2.0 * v - 1.0) / kPi;
      return std::abs(scaled) < 1.0 ? (1.0 + std::cos(kPi * scaled)) / 2.0 : 0.0;
    }
    case Sigmoid::kLinear: {
      const double scaled = std::abs(x) * (1.0 - v);
      return scaled < 1.0 ? 1.0 - scaled : 0.0;
    }
    case Sigmoid::kQuadratic: {
      const double scaled = x * std::sqrt(1.0 - v);
      return std::abs(scaled) < 1.0 ? 1.0 - scaled * scaled : 0.0;
    }
    case Sigmoid::kTanhSquared: {
      const double t = std::tanh(x * std::atanh(std::sqrt(1.0 - v)));
      return 1.0 - t * t;
    }
  }
  throw std::invalid_argument("tolerance: invalid sigmoid");
}

double Tolerance(double x, double lower, double upper, double margin, Sigmoid sigmoid,
                 double value_at_margin) {
  if (lower > upper) throw std::invalid_argument("tolerance: lower bound exceeds upper bound");
  if (margin < 0.0) throw std::invalid_argument("tolerance: margin must be non-negative");
  const bool in_bounds = lower <= x && x <= upper;
  if (in_bounds) return 1.0;
  if (margin == 0.0) return 0.0;
  const double distance = (x < lower ? lower - x : x - upper) / margin;
  return SigmoidValue(distance, sigmoid, value_at_margin);
}

}  // namespace dfmpc::task
