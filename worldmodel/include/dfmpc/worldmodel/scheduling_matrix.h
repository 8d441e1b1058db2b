// Scheduling matrices: which noise level every generated token has before
// each sampling call. Level 0 is clean, level K is pure noise.
#ifndef DFMPC_WORLDMODEL_SCHEDULING_MATRIX_H_
#define DFMPC_WORLDMODEL_SCHEDULING_MATRIX_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::worldmodel {

// Most levels (rows x horizon) one scheduling matrix may hold: 2^24 ints, 64
// MiB. Far above any real run (K = 1000 levels over H = 1000 tokens at u = 1
// is 2e6) and small enough that every index fits an int.
constexpr int64_t kMaxSchedulingMatrixLevels = int64_t{1} << 24;

enum class ScheduleKind { kPyramid, kFullSequence, kAutoregressive, kTrapezoid };

// "pyramid", "full_sequence", "autoregressive", "trapezoid"; throws
// std::invalid_argument naming the valid kinds otherwise.
ScheduleKind ParseScheduleKind(const std::string& name);
std::string ScheduleKindName(ScheduleKind kind);

// A dense (rows x horizon) matrix of levels in [0, K]. Row m holds the levels
// before sampling call m; the last row is all zeros, so there are rows() - 1
// calls. Call m moves every token t with level(m, t) > level(m + 1, t) one
// DDIM step from level(m, t) to level(m + 1, t).
class SchedulingMatrix {
 public:
  SchedulingMatrix(int rows, int horizon, int num_levels);

  int rows() const { return rows_; }
  int horizon() const { return horizon_; }
  int num_levels() const { return num_levels_; }
  int num_calls() const { return rows_ - 1; }
  int level(int row, int token) const { return levels_[row * horizon_ + token]; }
  void set_level(int row, int token, int level) { levels_[row * horizon_ + token] = level; }

  bool operator==(const SchedulingMatrix& other) const {
    return rows_ == other.rows_ && horizon_ == other.horizon_ &&
           num_levels_ == other.num_levels_ && levels_ == other.levels_;
  }

  // True when call `row` moves token `token` (its level drops).
  bool Changes(int row, int token) const {
    return level(row, token) > level(row + 1, token);
  }

 private:
  int rows_;
  int horizon_;
  int num_levels_;
  std::vector<int> levels_;
};

// Builds the matrix for K = num_levels sampling levels and H = horizon tokens,
// following the Diffusion Forcing reference definitions:
//   pyramid:        height = K + int((H - 1) * u) + 1,
//                   M[m, t] = clip(K + int(t * u) - m, 0, K)
//   full_sequence:  K + 1 rows, row m is K - m for every token
//   autoregressive: pyramid with u = K
//   trapezoid:      both ends descend like the pyramid's left end; token t has
//                   offset o_t = t for t < ceil(H / 2) and H - t otherwise,
//                   M[m, t] = clip(K + int(o_t * u) - m, 0, K) and
//                   height = K + int(max_t(o_t) * u) + 1.
// For odd H and u = 1 the trapezoid equals the reference. The reference
// leaves the middle token of an even H at level 0 from the start (it is never
// denoised) and, for u < 1, can stop before every token is clean; this
// definition fills the middle token and always ends on an all-zero row.
// Throws std::invalid_argument for K < 1, H < 1, u < 0 or not finite (u is
// ignored by full_sequence and autoregressive), or a matrix of more than
// kMaxSchedulingMatrixLevels levels.
SchedulingMatrix MakeSchedulingMatrix(ScheduleKind kind, int num_levels, int horizon,
                                      double uncertainty = 1.0);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SCHEDULING_MATRIX_H_
