// Action delay: each control step applies the action commanded `delay` steps
// earlier (zeros while fewer have been commanded).
#ifndef DFMPC_ENVS_SRC_ACTION_DELAY_H_
#define DFMPC_ENVS_SRC_ACTION_DELAY_H_

#include <Eigen/Core>

namespace dfmpc::envs {

class ActionDelay {
 public:
  // Delays up to `capacity` steps of `action_size` actions.
  ActionDelay(int capacity, int action_size);

  int delay() const { return delay_; }
  // Starts an episode: `delay` zero actions pending (0 <= delay <= capacity).
  void Reset(int delay);
  // Queues `commanded` and returns the action to apply now.
  Eigen::VectorXd Push(const Eigen::VectorXd& commanded);

  // The pending actions, next applied first, then zero rows up to the
  // capacity: capacity * action_size values.
  int state_size() const { return static_cast<int>(pending_.size()); }
  void Pack(Eigen::VectorXd* state, int* offset) const;
  // Restores what Pack wrote, with `delay` actions pending.
  void Unpack(const Eigen::VectorXd& state, int* offset, int delay);

 private:
  // One row per pending action, next applied first.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> pending_;
  int delay_ = 0;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_ACTION_DELAY_H_
