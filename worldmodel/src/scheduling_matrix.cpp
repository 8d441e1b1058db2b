#include "dfmpc/worldmodel/scheduling_matrix.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace dfmpc::worldmodel {
namespace {

// Shortest form of a double ("1e+10", "0.5"), for error messages.
std::string Format(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Rows for tokens whose offsets (in tokens) are `offsets`: every token starts
// at K + int(offset * u) (clipped to K) and drops one level per row.
SchedulingMatrix DescendingMatrix(int num_levels, const std::vector<int>& offsets,
                                  double uncertainty) {
  const int horizon = static_cast<int>(offsets.size());
  // The height in double first: K + int(offset * u) + 1 overflows int (and
  // the conversion is undefined) long before the matrix stops fitting.
  const int max_offset = *std::max_element(offsets.begin(), offsets.end());
  const double height = num_levels + std::floor(max_offset * uncertainty) + 1.0;
  if (height * horizon > static_cast<double>(kMaxSchedulingMatrixLevels)) {
    throw std::invalid_argument(
        "scheduling matrix for K = " + std::to_string(num_levels) +
        ", H = " + std::to_string(horizon) + ", u = " + Format(uncertainty) + " would have " +
        Format(height) + " rows of " + std::to_string(horizon) + " tokens, more than the " +
        std::to_string(kMaxSchedulingMatrixLevels) + " levels a matrix may hold");
  }
  std::vector<int> start(horizon);
  int highest = 0;
  for (int t = 0; t < horizon; ++t) {
    start[t] = num_levels + static_cast<int>(offsets[t] * uncertainty);
    highest = std::max(highest, start[t]);
  }
  SchedulingMatrix matrix(highest + 1, horizon, num_levels);
  for (int m = 0; m < matrix.rows(); ++m) {
    for (int t = 0; t < horizon; ++t) {
      matrix.set_level(m, t, std::clamp(start[t] - m, 0, num_levels));
    }
  }
  return matrix;
}

SchedulingMatrix Pyramid(int num_levels, int horizon, double uncertainty) {
  std::vector<int> offsets(horizon);
  for (int t = 0; t < horizon; ++t) offsets[t] = t;
  return DescendingMatrix(num_levels, offsets, uncertainty);
}

SchedulingMatrix Trapezoid(int num_levels, int horizon, double uncertainty) {
  const int half = (horizon + 1) / 2;
  std::vector<int> offsets(horizon);
  for (int t = 0; t < horizon; ++t) offsets[t] = t < half ? t : horizon - t;
  return DescendingMatrix(num_levels, offsets, uncertainty);
}

SchedulingMatrix FullSequence(int num_levels, int horizon) {
  return DescendingMatrix(num_levels, std::vector<int>(horizon, 0), 0.0);
}

}  // namespace

SchedulingMatrix::SchedulingMatrix(int rows, int horizon, int num_levels)
    : rows_(rows), horizon_(horizon), num_levels_(num_levels),
      levels_(static_cast<size_t>(rows) * horizon, 0) {}

ScheduleKind ParseScheduleKind(const std::string& name) {
  if (name == "pyramid") return ScheduleKind::kPyramid;
  if (name == "full_sequence") return ScheduleKind::kFullSequence;
  if (name == "autoregressive") return ScheduleKind::kAutoregressive;
  if (name == "trapezoid") return ScheduleKind::kTrapezoid;
  throw std::invalid_argument("unknown schedule kind '" + name +
                              "' (expected pyramid, full_sequence, autoregressive or trapezoid)");
}

std::string ScheduleKindName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kPyramid: return "pyramid";
    case ScheduleKind::kFullSequence: return "full_sequence";
    case ScheduleKind::kAutoregressive: return "autoregressive";
    case ScheduleKind::kTrapezoid: return "trapezoid";
  }
  throw std::invalid_argument("invalid ScheduleKind value");
}

SchedulingMatrix MakeSchedulingMatrix(ScheduleKind kind, int num_levels, int horizon,
                                      double uncertainty) {
  if (num_levels < 1) {
    throw std::invalid_argument("number of sampling levels K must be >= 1, got " +
                                std::to_string(num_levels));
  }
  if (horizon < 1) {
    throw std::invalid_argument("horizon H must be >= 1, got " + std::to_string(horizon));
  }
  if (!(uncertainty >= 0.0) || !std::isfinite(uncertainty)) {
    throw std::invalid_argument("uncertainty scale must be finite and >= 0, got " +
                                Format(uncertainty));
  }
  switch (kind) {
    case ScheduleKind::kPyramid: return Pyramid(num_levels, horizon, uncertainty);
    case ScheduleKind::kFullSequence: return FullSequence(num_levels, horizon);
    case ScheduleKind::kAutoregressive: return Pyramid(num_levels, horizon, num_levels);
    case ScheduleKind::kTrapezoid: return Trapezoid(num_levels, horizon, uncertainty);
  }
  throw std::invalid_argument("invalid ScheduleKind value");
}

}  // namespace dfmpc::worldmodel
