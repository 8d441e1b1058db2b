#include "learning_rate.h"

#include <algorithm>
#include <cmath>

namespace dfmpc::worldmodel {

double WarmupCosineLearningRate(int step, int total, int warmup, double peak, double min_ratio) {
  constexpr double kPi = 3.14159265358979323846;
  if (step < warmup) return peak * (step + 1) / warmup;
  const double span = std::max(1, total - warmup);
  const double progress = std::min(1.0, (step - warmup) / span);
  return peak * (min_ratio + (1 - min_ratio) * 0.5 * (1 + std::cos(kPi * progress)));
}

}  // namespace dfmpc::worldmodel
