#include "statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace dfmpc::cli {

double Percentile(std::vector<double> values, double p) {
  if (!(p >= 0.0 && p <= 100.0)) {
    throw std::invalid_argument("percentile " + std::to_string(p) + " is not in [0, 100]");
  }
  const auto is_nan = [](double v) { return std::isnan(v); };
  if (values.empty() || std::any_of(values.begin(), values.end(), is_nan)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  std::sort(values.begin(), values.end());
  const double index = p / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(index));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double weight = index - static_cast<double>(below);
  // On a rank exactly: no interpolation, which would turn an infinity into NaN.
  if (weight == 0.0) return values[below];
  return values[below] + weight * (values[above] - values[below]);
}

double Median(std::vector<double> values) { return Percentile(std::move(values), 50.0); }

}  // namespace dfmpc::cli
