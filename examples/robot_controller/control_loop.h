// The robot side of the example: a MuJoCo task stepped once per control
// period of wall-clock time, controlled through an AsyncPlanner.
#ifndef DFMPC_EXAMPLES_ROBOT_CONTROLLER_CONTROL_LOOP_H_
#define DFMPC_EXAMPLES_ROBOT_CONTROLLER_CONTROL_LOOP_H_

#include <dfmpc/planner/async_planner.h>

#include <cstdint>
#include <string>
#include <vector>

namespace robot_controller {

struct LoopOptions {
  std::string model;        // a dfmpc world-model file
  std::string task;         // the robot (a name or a task folder); empty: the model's task
  double rate_hz = 50.0;    // control rate of the loop (wall clock)
  double max_wait_ms = -1;  // how long a step may wait for its plan; < 0: 3/4 of the period
  int steps = 1000;         // control steps in all, over as many episodes as they span
  std::uint64_t seed = 0;   // first episode's seed; later ones count up
  int threads = 1;          // LibTorch threads of the planning thread
  // Whether a plan's model call that would end past Step's wait stops
  // (kHard) or runs to its end (kStartOnly): AsyncPlannerOptions.
  dfmpc::planner::DeadlineKind deadline_kind = dfmpc::planner::DeadlineKind::kStartOnly;
};

struct LoopReport {
  std::string task;
  double period_ms = 0, max_wait_ms = 0;
  std::vector<double> returns;   // episodes that ran to their end
  double unfinished_return = 0;  // the last episode's, if cut short by the step count
  int unfinished_steps = 0;
  std::vector<double> step_latency_ms;  // wall time of every AsyncPlanner::Step
  dfmpc::planner::AsyncStats totals;    // summed over episodes (max for the age)
  std::int64_t overruns = 0;            // periods the loop itself ran past
};

// Runs the loop; prints one line per finished episode. Throws what the
// planner or the task throws for a bad model or options.
LoopReport RunControlLoop(const LoopOptions& options);

}  // namespace robot_controller

#endif  // DFMPC_EXAMPLES_ROBOT_CONTROLLER_CONTROL_LOOP_H_
