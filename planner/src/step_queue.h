// The control steps a planner has observed but not yet put in its context
// history: Observe's side of a control step, with no LibTorch and no model
// work. Preallocated: after construction, observing and taking steps copy
// into storage it already has (observations of one size).
//
// Steps are numbered from Reset's observation, step 0. Each queued step
// holds the observation o_s and the action a_{s-1} applied before it; the
// step before the first queued one stays readable (previous()), because a
// real token's change feature is o_s - o_{s-1}.
#ifndef DFMPC_PLANNER_SRC_STEP_QUEUE_H_
#define DFMPC_PLANNER_SRC_STEP_QUEUE_H_

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace dfmpc::planner {

class StepQueue {
 public:
  // Queues at most `capacity` steps (>= 1): a planner further behind drops
  // the oldest and restarts its history (restart_history()).
  StepQueue(int capacity, int observation_dim, int action_dim);

  // Step 0 (Reset's): queued, reached by the zero action; its own previous
  // observation is itself, so its change feature is zero, as in training.
  void Reset(const Eigen::VectorXd& observation);

  // Queues step s + 1, reached by `executed_action`.
  void Observe(const Eigen::VectorXd& observation, const Eigen::VectorXd& executed_action);
  // The first Act after Reset may hand in Reset's observation again (the
  // loop's first "a = Act(o)"): true when `observation` is that step 0
  // itself, which then counts as received and queues nothing.
  bool ConfirmStepZero(const Eigen::VectorXd& observation);

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The i-th queued step (0: oldest) and the observation before it.
  const Eigen::VectorXd& observation(int i) const { return slots_[Slot(i + 1)].observation; }
  const Eigen::VectorXd& action(int i) const { return slots_[Slot(i + 1)].action; }
  const Eigen::VectorXd& previous(int i) const { return slots_[Slot(i)].observation; }
  const Eigen::VectorXd& newest_observation() const { return observation(size_ - 1); }

  // The newest observed step: 0 after Reset.
  std::int64_t newest_step() const { return newest_step_; }
  // Whether nothing has been observed since Reset (ConfirmStepZero may
  // still accept step 0).
  bool awaiting_first_step() const { return awaiting_first_step_; }
  // More than `capacity` steps were queued since the last Take: the oldest
  // were dropped, so the history must restart at the oldest one kept.
  bool restart_history() const { return restart_history_; }

  // Removes the `count` oldest queued steps (they are in the history now).
  void Take(int count);

  // What Observe and Take change, to undo them (a failed control step).
  struct Mark {
    int head = 0, size = 0;
    std::int64_t newest_step = 0;
    bool awaiting_first_step = false, restart_history = false;
  };
  // Valid until more than one Observe past it (its slots are not reused
  // before then).
  Mark Save() const;
  void Restore(const Mark& mark);

 private:
  struct Step {
    Eigen::VectorXd observation;
    Eigen::VectorXd action;  // applied before it
  };
  // Slot of queue index i, where index 0 is the step before the oldest
  // queued one.
  int Slot(int i) const { return (head_ + i) % static_cast<int>(slots_.size()); }

  int capacity_;
  // A ring: the previous step, up to `capacity` queued ones, and one spare
  // so that Observe writes before it drops (Save stays valid for one).
  std::vector<Step> slots_;
  int head_ = 0;  // slot of the previous step
  int size_ = 0;  // queued steps
  std::int64_t newest_step_ = 0;
  bool awaiting_first_step_ = false;
  bool restart_history_ = false;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_STEP_QUEUE_H_
