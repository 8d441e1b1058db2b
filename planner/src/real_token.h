// The real token of a control step, [a_{s-1}, o_s, o_s - o_{s-1}] (the
// change only in layouts that have it), normalized with the checkpoint's
// statistics, and the planner's policy for observations the model cannot
// represent.
//
// Normalization runs in double: the changes are small differences of large
// values, and per-feature scaling magnifies their rounding. An observation
// feature more than kMaxNormalized standard deviations of the training data
// away from its mean is rejected: it is a sensor fault or a unit error, not a
// state the model knows, and beyond that range its float arithmetic stops
// being trustworthy. A change feature is derived from two accepted
// observations; it is clipped to the same range instead, so one wild reading
// cannot make every later observation unusable.
#ifndef DFMPC_PLANNER_REAL_TOKEN_H_
#define DFMPC_PLANNER_REAL_TOKEN_H_

#include <ATen/core/Tensor.h>

#include <Eigen/Core>
#include <string>

#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::planner {

class RealTokenBuilder {
 public:
  static constexpr double kMaxNormalized = 1e4;

  RealTokenBuilder(const worldmodel::TokenLayout& layout, const worldmodel::Normalizer& normalizer,
                   std::string task);

  // Throws std::invalid_argument for a wrong size, a non-finite value or a
  // feature beyond kMaxNormalized standard deviations, naming the feature.
  void Check(const Eigen::VectorXd& observation) const;

  // The normalized token [1, 1, d] (float, on `device`) for `observation`
  // reached by `action` from `previous`; `observation` must pass Check.
  at::Tensor Build(const Eigen::VectorXd& action, const Eigen::VectorXd& observation,
                   const Eigen::VectorXd& previous, const at::Device& device) const;

 private:
  worldmodel::TokenLayout layout_;
  Eigen::VectorXd mean_, scale_;
  std::string task_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_REAL_TOKEN_H_
