// A Planner on a planning thread of its own, for controllers with a hard
// period (MuJoCo MPC's split: state in, optimize on a planning thread, read
// the action at the control rate).
//
// The control thread calls Step once per control period: it hands in the
// observation and gets the action to apply. Step waits for the plan made
// from that observation at most `max_wait`; when planning runs later, the
// action comes from the newest plan shifted by the control steps since it
// was made (zero past its end), and the step counts as a miss. The planning
// thread then catches up: its next optimization takes every observation that
// arrived meanwhile, appends them to the history and shifts the plan past
// them in one warm step (Planner::Optimize). The published plan is a copy
// swapped in under a mutex, so reading never waits on a model call.
//
// Only Eigen and this header are needed to use it; no LibTorch header.
#ifndef DFMPC_PLANNER_ASYNC_PLANNER_H_
#define DFMPC_PLANNER_ASYNC_PLANNER_H_

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "dfmpc/planner/planner.h"

namespace dfmpc::planner {

struct AsyncPlannerOptions {
  // Longest time Step waits for the plan of its own observation, in
  // [0, 1 hour]. Zero never waits: every action then comes from a plan at
  // least one step old.
  std::chrono::microseconds max_wait{std::chrono::milliseconds(10)};
  // The control period, when the controller has one (0: none): with
  // max_wait 0 it sets the optimization's deadline (below).
  std::chrono::microseconds period{0};
  // Time kept back from each deadline for publishing the plan and waking
  // Step. Each optimization gets the deadline (arrival of its newest
  // observation) + max_wait - margin, so that its plan is ready while Step
  // still waits; with max_wait 0, + period - margin; none when that is not
  // positive (Planner::Optimize documents the deadline's contract). The
  // deadline cuts a plan short to be in time; a plan that cannot start in
  // time runs to its end without one (AsyncStats::late), since a plan one
  // step old is far better than none.
  std::chrono::microseconds margin{500};
  // Whether a model call that would end after that deadline stops between
  // its blocks (kHard) or runs to its end (kStartOnly). A stopped
  // optimization runs again without a deadline (AsyncStats::late), its
  // stopped work lost, while a call that runs on ends a little late and is
  // never redone (the misses measured alike: docs/experiments.md,
  // real-time control).
  DeadlineKind deadline_kind = DeadlineKind::kStartOnly;
};

// Counters since the last Reset.
struct AsyncStats {
  std::int64_t steps = 0;   // Step calls
  std::int64_t misses = 0;  // steps whose action came from an older plan
  // Control steps between the step an action was applied at and the step
  // its plan was made at: 0 for a fresh plan.
  std::int64_t max_action_age = 0;
  std::int64_t total_action_age = 0;
  std::int64_t plans = 0;    // optimizations the planning thread finished
  double total_plan_ms = 0;  // their wall time, summed (mean: / plans)
  double max_plan_ms = 0;
  // Optimizations that threw (the planner keeps its state and retries with
  // the next observation; Step keeps serving the shifted plan meanwhile).
  std::int64_t planner_errors = 0;
  std::string last_error;
  // Optimizations whose candidates were all non-finite: their action is the
  // older plan's (zero without one) and the history restarts
  // (StepStats::fallback).
  std::int64_t fallbacks = 0;
  // Optimizations the deadline cut short (a jump).
  std::int64_t cut_short = 0;
  // Optimizations the planner deferred (their first call could not end by
  // the deadline, or with DeadlineKind::kHard a call stopped at it) and that
  // ran again without one: their plan serves the steps after the one that
  // asked for it.
  std::int64_t late = 0;
  // Of those, the ones whose model call stopped at the deadline
  // (DeadlineKind::kHard): their stopped work was done again.
  std::int64_t stopped = 0;
  StepStats last_step;  // of the newest optimization
};

class AsyncPlanner {
 public:
  // Takes the planner over (and its abort callback) and starts the planning
  // thread. Throws std::invalid_argument for a null planner or a max_wait,
  // period or margin outside [0, 1 hour].
  explicit AsyncPlanner(std::unique_ptr<Planner> planner,
                        const AsyncPlannerOptions& options = AsyncPlannerOptions());
  // Stops the planning thread after the model call it is in, if any.
  ~AsyncPlanner();
  AsyncPlanner(const AsyncPlanner&) = delete;
  AsyncPlanner& operator=(const AsyncPlanner&) = delete;

  // Starts an episode at `observation`: the planning thread resets the
  // planner, which plans step 0 from noise, and Reset returns when that plan
  // is published (so it blocks for a first plan's K model calls: call it
  // before the control loop starts). Throws what Planner::Reset throws.
  void Reset(const Eigen::VectorXd& observation);

  // One control step: `observation` is the one the last returned action led
  // to; returns the action to apply now, finite and within [-1, 1]. The
  // first Step after Reset may pass Reset's observation again (its action
  // is then Reset's plan's, at once); any other observation there is a step
  // of its own, reached by the zero action, as in Planner::Act. Blocks at
  // most max_wait plus a mutex held for a copy of the plan. Throws
  // std::invalid_argument before Reset or for an observation the planner
  // refuses (nothing is queued then). A failure on the planning thread never
  // reaches Step: it is counted in stats().
  Eigen::VectorXd Step(const Eigen::VectorXd& observation);

  AsyncStats stats() const;
  int observation_dim() const;
  int action_dim() const;
  // Physics steps per control step the model was trained at.
  int action_repeat() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_ASYNC_PLANNER_H_
