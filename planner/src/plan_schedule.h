// Noise-level bookkeeping of the plan cache (DESIGN.md, "MPC: the plan
// cache across environment steps").
//
// The planner's pyramid places token t at level clip(K + ceil(t * u) - m, 0, K)
// before call m. It differs from the sampler's pyramid (int(t * u)) only for
// fractional u: rounding up keeps exactly one token clean when the first
// token reaches level 0, where rounding down would freeze the first 1 / u
// plan tokens (and their actions) before their observations arrive.
//
// Between control steps the plan rests at row K: token t at
// min(K, ceil(t * u)), so the first token is clean (its action is executed)
// and later tokens are noisier. With u = K / H every token gets its K
// denoising steps spread over its H control steps in the plan; with u = 1
// tokens past the first K stay pure noise and are never run.
//
// Programs are scheduling matrices: row m holds the levels before call m,
// the last row the levels after the last call.
#ifndef DFMPC_PLANNER_PLAN_SCHEDULE_H_
#define DFMPC_PLANNER_PLAN_SCHEDULE_H_

#include <vector>

#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::planner {

// min(K, ceil(t * u)) for t in [0, H).
std::vector<int> RestingLevels(int num_levels, int horizon, double uncertainty);

// From pure noise along the planner's pyramid: to the resting levels (rows
// 0..K) or, with `complete`, until every token is clean.
worldmodel::SchedulingMatrix FromNoiseProgram(int num_levels, int horizon, double uncertainty,
                                              bool complete);

// One warm control step: the resting plan shifted by `shift` tokens (fresh
// tokens at level K appended), re-noised by r - 1 + `renoise_levels` levels
// (capped at K), then r calls, each lowering every token by one level and
// the last taking it the rest of the way back to its resting level (a DDIM
// jump of renoise_levels + 1 levels for r = 1). A shift above one catches up
// with control steps that passed without a plan; it needs no more calls,
// because the last call takes every token to its resting level wherever it
// started. Requires ceil(H * u) >= K so that the fresh tokens belong at
// level K, and 1 <= shift < H.
worldmodel::SchedulingMatrix WarmProgram(int num_levels, int horizon, double uncertainty, int calls,
                                         int renoise_levels, int shift = 1);

// The warm step of the block cache (PlannerOptions::front_tokens): the kept
// plan's tokens are at `kept_levels` (H levels, before the shift; each
// between its resting level and K), and only the first `moving` tokens of
// the shifted plan run, as WarmProgram runs them (a token that waited is
// re-noised to a resting token's level, or not at all if it is noisier
// already); the others keep their level in every row, which leaves them out
// of every call's window (causal attention: the front never reads them).
// With kept_levels at rest and moving = H it equals WarmProgram.
worldmodel::SchedulingMatrix WarmProgram(int num_levels, int horizon, double uncertainty, int calls,
                                         int renoise_levels, int shift,
                                         const std::vector<int>& kept_levels, int moving);

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLAN_SCHEDULE_H_
