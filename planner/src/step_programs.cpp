#include "step_programs.h"

#include "plan_schedule.h"

namespace dfmpc::planner {

using worldmodel::SchedulingMatrix;

StepPrograms::StepPrograms(const PlannerOptions& options)
    : options_(options),
      from_noise_(FromNoiseProgram(options.levels, options.horizon, options.uncertainty,
                                   /*complete=*/options.mode == PlanMode::kReplan)),
      warm_(options.horizon) {}

StepPrograms::Choice StepPrograms::For(
    bool kept, int shift, const std::vector<int>& kept_levels,
    const std::function<bool(const SchedulingMatrix&)>& refresh_fits) {
  Choice choice;
  choice.shift = shift;
  choice.warm = options_.mode == PlanMode::kWarm && kept && shift < options_.horizon;
  if (!choice.warm) {
    choice.program = &from_noise_;
    return choice;
  }
  const bool block_cache = options_.BlockCacheOn();
  choice.front_only = block_cache && waited_steps_ + shift < options_.refresh_every;
  choice.program = &Warm(shift, kept_levels, choice.front_only);
  // The refresh waits for a step with time for it. However long: a far plan
  // of fresh noise leaves an F-token planner, which still serves the front,
  // while a deferred step leaves the actuator an aging plan (and, a step
  // behind, a refresh that fits even less).
  if (block_cache && !choice.front_only && !refresh_fits(*choice.program)) {
    choice.front_only = choice.refresh_postponed = true;
    choice.program = &Warm(shift, kept_levels, /*front_only=*/true);
  }
  return choice;
}

void StepPrograms::Planned(const Choice& choice) {
  waited_steps_ = choice.front_only ? waited_steps_ + choice.shift : 0;
}

// Without the block cache the kept plan is always at rest, so each shift's
// program is built once; with it, from the kept plan's levels (far tokens
// may have waited).
const SchedulingMatrix& StepPrograms::Warm(int shift, const std::vector<int>& kept_levels,
                                           bool front_only) {
  if (options_.BlockCacheOn()) {
    block_ = WarmProgram(options_.levels, options_.horizon, options_.uncertainty,
                         options_.calls_per_step, options_.renoise_levels, shift, kept_levels,
                         front_only ? options_.front_tokens : options_.horizon);
    return *block_;
  }
  std::optional<SchedulingMatrix>& program = warm_[shift];
  if (!program) {
    program = WarmProgram(options_.levels, options_.horizon, options_.uncertainty,
                          options_.calls_per_step, options_.renoise_levels, shift);
  }
  return *program;
}

}  // namespace dfmpc::planner
