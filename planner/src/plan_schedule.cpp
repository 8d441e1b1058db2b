#include "plan_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dfmpc::planner {

using worldmodel::SchedulingMatrix;

namespace {

// ceil(t * u), robust to t * u landing a rounding error above an integer.
int Offset(int t, double uncertainty) {
  return static_cast<int>(std::ceil(t * uncertainty - 1e-9));
}

}  // namespace

std::vector<int> RestingLevels(int num_levels, int horizon, double uncertainty) {
  if (num_levels < 1 || horizon < 1 || !(uncertainty >= 0.0)) {
    throw std::invalid_argument("plan schedule needs K >= 1, H >= 1 and u >= 0");
  }
  std::vector<int> levels(horizon);
  for (int t = 0; t < horizon; ++t) levels[t] = std::min(num_levels, Offset(t, uncertainty));
  return levels;
}

SchedulingMatrix FromNoiseProgram(int num_levels, int horizon, double uncertainty, bool complete) {
  if (num_levels < 1 || horizon < 1 || !(uncertainty >= 0.0)) {
    throw std::invalid_argument("plan schedule needs K >= 1, H >= 1 and u >= 0");
  }
  const int rows = complete ? num_levels + Offset(horizon - 1, uncertainty) + 1 : num_levels + 1;
  SchedulingMatrix program(rows, horizon, num_levels);
  for (int row = 0; row < rows; ++row) {
    for (int t = 0; t < horizon; ++t) {
      program.set_level(row, t,
                        std::clamp(num_levels + Offset(t, uncertainty) - row, 0, num_levels));
    }
  }
  return program;
}

SchedulingMatrix WarmProgram(int num_levels, int horizon, double uncertainty, int calls,
                             int renoise_levels, int shift) {
  return WarmProgram(num_levels, horizon, uncertainty, calls, renoise_levels, shift,
                     RestingLevels(num_levels, horizon, uncertainty), horizon);
}

SchedulingMatrix WarmProgram(int num_levels, int horizon, double uncertainty, int calls,
                             int renoise_levels, int shift, const std::vector<int>& kept_levels,
                             int moving) {
  if (calls < 1 || renoise_levels < 0) {
    throw std::invalid_argument("warm plan needs r >= 1 calls and renoise levels >= 0");
  }
  if (shift < 1 || shift >= horizon) {
    throw std::invalid_argument("warm plan shift must be in [1, H), got " + std::to_string(shift) +
                                " for H = " + std::to_string(horizon));
  }
  if (Offset(horizon, uncertainty) < num_levels) {
    throw std::invalid_argument(
        "warm plan needs ceil(H * u) >= K, got H = " + std::to_string(horizon) +
        ", u = " + std::to_string(uncertainty) + ", K = " + std::to_string(num_levels));
  }
  if (static_cast<int>(kept_levels.size()) != horizon || moving < 1 || moving > horizon) {
    throw std::invalid_argument("warm plan needs H kept levels and 1 <= moving tokens <= H");
  }
  const std::vector<int> rest = RestingLevels(num_levels, horizon, uncertainty);
  SchedulingMatrix program(calls + 1, horizon, num_levels);
  for (int t = 0; t < horizon; ++t) {
    const bool fresh = t + shift >= horizon;
    const int current = fresh ? num_levels : kept_levels[t + shift];
    if (current < rest[t] || current > num_levels) {
      throw std::invalid_argument("warm plan: a kept token's level " + std::to_string(current) +
                                  " is outside [" + std::to_string(rest[t]) + ", K]");
    }
    if (t >= moving) {  // waits at its level for a refresh
      for (int row = 0; row <= calls; ++row) program.set_level(row, t, current);
      continue;
    }
    // A token that waited is already noisier than its shifted resting
    // level; it is re-noised to where a resting one would be, or not at all.
    const int shifted = fresh ? num_levels : rest[t + shift];
    const int start = std::min(num_levels, std::max(current, shifted + calls - 1 + renoise_levels));
    for (int row = 0; row < calls; ++row) {
      program.set_level(row, t, std::max(rest[t], start - row));
    }
    // With u > 1 neighbours differ by more than one level: the last call
    // takes each token the rest of the way.
    program.set_level(calls, t, rest[t]);
  }
  return program;
}

}  // namespace dfmpc::planner
