#include "step_queue.h"

#include <stdexcept>

namespace dfmpc::planner {

StepQueue::StepQueue(int capacity, int observation_dim, int action_dim)
    : capacity_(capacity), slots_(capacity + 2) {
  if (capacity < 1) throw std::invalid_argument("StepQueue: capacity must be >= 1");
  for (Step& step : slots_) {
    step.observation = Eigen::VectorXd::Zero(observation_dim);
    step.action = Eigen::VectorXd::Zero(action_dim);
  }
}

void StepQueue::Reset(const Eigen::VectorXd& observation) {
  head_ = 0;
  size_ = 1;
  slots_[Slot(0)].observation = observation;
  slots_[Slot(1)].observation = observation;
  slots_[Slot(1)].action.setZero();
  newest_step_ = 0;
  awaiting_first_step_ = true;
  restart_history_ = false;
}

bool StepQueue::ConfirmStepZero(const Eigen::VectorXd& observation) {
  if (!awaiting_first_step_ || size_ != 0 || observation != previous(0)) return false;
  awaiting_first_step_ = false;
  return true;
}

void StepQueue::Observe(const Eigen::VectorXd& observation,
                        const Eigen::VectorXd& executed_action) {
  awaiting_first_step_ = false;
  Step& step = slots_[Slot(size_ + 1)];
  step.observation = observation;
  step.action = executed_action;
  ++newest_step_;
  if (size_ < capacity_) {
    ++size_;
  } else {  // the oldest queued step becomes the previous one
    head_ = Slot(1);
    restart_history_ = true;
  }
}

void StepQueue::Take(int count) {
  if (count < 0 || count > size_) throw std::logic_error("StepQueue: Take past the queue");
  head_ = Slot(count);
  size_ -= count;
  if (count > 0) restart_history_ = false;
}

StepQueue::Mark StepQueue::Save() const {
  return Mark{head_, size_, newest_step_, awaiting_first_step_, restart_history_};
}

void StepQueue::Restore(const Mark& mark) {
  head_ = mark.head;
  size_ = mark.size;
  newest_step_ = mark.newest_step;
  awaiting_first_step_ = mark.awaiting_first_step;
  restart_history_ = mark.restart_history;
}

}  // namespace dfmpc::planner
