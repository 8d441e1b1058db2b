// dm_control's smooth reward shaping: `tolerance(x, bounds, margin, sigmoid)`.
// Returns 1 when lower <= x <= upper and decays smoothly outside, reaching
// `value_at_margin` at distance `margin` from the nearest bound. With
// margin 0 the result is the indicator of the bounds.
#ifndef DFMPC_TASK_TOLERANCE_H_
#define DFMPC_TASK_TOLERANCE_H_

#include <string>
#include <vector>

namespace dfmpc::task {

enum class Sigmoid {
  kGaussian,
  kHyperbolic,
  kLongTail,
  kReciprocal,
  kCosine,
  kLinear,
  kQuadratic,
  kTanhSquared,
};

// dm_control's names of the sigmoids, in the enum's order: "gaussian",
// "hyperbolic", "long_tail", "reciprocal", "cosine", "linear", "quadratic",
// "tanh_squared".
const std::vector<std::string>& SigmoidNames();

// One of SigmoidNames(); throws std::invalid_argument for another name.
Sigmoid ParseSigmoid(const std::string& name);

// The sigmoid applied to a distance x already divided by the margin, so that
// SigmoidValue(1, s, v) == v. value_at_margin must lie in (0, 1), or in
// [0, 1) for the sigmoids with finite support (cosine, linear, quadratic).
double SigmoidValue(double x, Sigmoid sigmoid, double value_at_margin);

// Throws std::invalid_argument if lower > upper, margin < 0 or
// value_at_margin is out of range for the sigmoid.
double Tolerance(double x, double lower, double upper, double margin = 0.0,
                 Sigmoid sigmoid = Sigmoid::kGaussian, double value_at_margin = 0.1);

}  // namespace dfmpc::task

#endif  // DFMPC_TASK_TOLERANCE_H_
