// What is left of one Planner::Optimize's time, and the checks that end it:
// the abort callback (PlannerAborted) and, between a model call's blocks
// (dfmpc/worldmodel/between_blocks.h), the deadline (StepStopped).
#ifndef DFMPC_PLANNER_SRC_STEP_BUDGET_H_
#define DFMPC_PLANNER_SRC_STEP_BUDGET_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "dfmpc/planner/planner.h"

namespace dfmpc::planner {

// Thrown between a model call's blocks when the call would not end by the
// step's deadline; Optimize catches it and defers the step
// (StepStats::stopped).
class StepStopped : public std::runtime_error {
 public:
  StepStopped() : std::runtime_error("planner: a model call stopped at the step's deadline") {}
};

class StepBudget {
 public:
  using Clock = std::chrono::steady_clock;

  // `abort` (may be empty) must outlive the budget.
  StepBudget(Clock::time_point deadline, DeadlineKind kind, const std::function<bool()>& abort)
      : deadline_(deadline), stops_calls_(kind == DeadlineKind::kHard), abort_(abort) {}

  bool timed() const { return deadline_ != Clock::time_point::max(); }
  // Whether work predicted to take `seconds`, started now, ends by the
  // deadline.
  bool Fits(double seconds) const {
    return !timed() || Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(seconds)) <=
                           deadline_;
  }
  // Throws PlannerAborted when the abort callback asks to stop.
  void CheckAbort() const {
    if (abort_ && abort_()) throw PlannerAborted("planner: aborted by its abort callback");
  }
  // At `now`, before block `done` of a model call's `blocks`, the first of
  // which began at `blocks_start`: the abort callback, then whether the
  // rest of the call at the pace of its blocks so far (none before the
  // first) and `after_call` seconds of work after it would end by the
  // deadline (DeadlineKind::kHard only). The pace covers whatever slowed
  // the call, a preempted thread included.
  void CheckBeforeBlock(Clock::time_point now, Clock::time_point blocks_start, int done, int blocks,
                        double after_call) const {
    CheckAbort();
    if (!timed() || !stops_calls_) return;
    const double pace =
        done > 0 ? std::chrono::duration<double>(now - blocks_start).count() / done : 0.0;
    const double rest = pace * std::max(blocks - done, 0) + after_call;
    if (now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(rest)) >
        deadline_) {
      throw StepStopped();
    }
  }

 private:
  Clock::time_point deadline_;
  bool stops_calls_;
  const std::function<bool()>& abort_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_STEP_BUDGET_H_
