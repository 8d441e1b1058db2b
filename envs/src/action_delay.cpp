#include "action_delay.h"

namespace dfmpc::envs {

ActionDelay::ActionDelay(int capacity, int action_size)
    : pending_(decltype(pending_)::Zero(capacity, action_size)) {}

void ActionDelay::Reset(int delay) {
  pending_.setZero();
  delay_ = delay;
}

Eigen::VectorXd ActionDelay::Push(const Eigen::VectorXd& commanded) {
  if (delay_ == 0) return commanded;
  const Eigen::VectorXd applied = pending_.row(0).transpose();
  for (int i = 1; i < delay_; ++i) pending_.row(i - 1) = pending_.row(i);
  pending_.row(delay_ - 1) = commanded.transpose();
  return applied;
}

void ActionDelay::Pack(Eigen::VectorXd* state, int* offset) const {
  state->segment(*offset, pending_.size()) =
      Eigen::Map<const Eigen::VectorXd>(pending_.data(), pending_.size());
  *offset += static_cast<int>(pending_.size());
}

void ActionDelay::Unpack(const Eigen::VectorXd& state, int* offset, int delay) {
  Eigen::Map<Eigen::VectorXd>(pending_.data(), pending_.size()) =
      state.segment(*offset, pending_.size());
  pending_.bottomRows(pending_.rows() - delay).setZero();
  *offset += static_cast<int>(pending_.size());
  delay_ = delay;
}

}  // namespace dfmpc::envs
