// Which program (plan_schedule.h) runs a planner's control step: from
// noise, or the warm program for a plan moved by some steps; with the block
// cache (PlannerOptions::front_tokens), only the plan's front on the steps
// between refreshes, and on a refresh that would not end by the deadline.
// No model work; the warm programs without the block cache are built once
// per shift.
#ifndef DFMPC_PLANNER_SRC_STEP_PROGRAMS_H_
#define DFMPC_PLANNER_SRC_STEP_PROGRAMS_H_

#include <functional>
#include <optional>
#include <vector>

#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::planner {

class StepPrograms {
 public:
  // `options`: resolved (uncertainty and context length filled in).
  explicit StepPrograms(const PlannerOptions& options);

  struct Choice {
    const worldmodel::SchedulingMatrix* program = nullptr;
    int shift = 0;                // control steps the kept plan moves by
    bool warm = false;            // the kept plan runs on (else: from noise)
    bool front_only = false;      // block cache: the far plan waits this step
    bool refresh_postponed = false;  // ... because the whole plan would not fit
  };

  // The program of a step that moves the plan by `shift` control steps.
  // `kept`: there is a plan to keep (warm mode, a plan made from this
  // history); `kept_levels`: its levels (Plan::levels). `refresh_fits`: with
  // the block cache, whether a whole-plan program would end by the deadline.
  // The matrix pointed to stays valid until the next For.
  Choice For(bool kept, int shift, const std::vector<int>& kept_levels,
             const std::function<bool(const worldmodel::SchedulingMatrix&)>& refresh_fits);

  // A step ran `choice` and planned: the far plan's wait grows or ends.
  void Planned(const Choice& choice);
  // A new episode, or a plan dropped: no far plan waits.
  void Forget() { waited_steps_ = 0; }

 private:
  const worldmodel::SchedulingMatrix& Warm(int shift, const std::vector<int>& kept_levels,
                                           bool front_only);

  PlannerOptions options_;
  const worldmodel::SchedulingMatrix from_noise_;
  std::vector<std::optional<worldmodel::SchedulingMatrix>> warm_;  // by shift
  std::optional<worldmodel::SchedulingMatrix> block_;  // the last step's, with the block cache
  int waited_steps_ = 0;  // control steps the block cache's far plan has waited
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_STEP_PROGRAMS_H_
