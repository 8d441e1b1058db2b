#include "dfmpc/worldmodel/scheduling_matrix.h"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::worldmodel {
namespace {

using Rows = std::vector<std::vector<int>>;

Rows ToRows(const SchedulingMatrix& m) {
  Rows rows(m.rows(), std::vector<int>(m.horizon()));
  for (int r = 0; r < m.rows(); ++r) {
    for (int t = 0; t < m.horizon(); ++t) rows[r][t] = m.level(r, t);
  }
  return rows;
}

TEST(SchedulingMatrixTest, PyramidHandChecked) {
  // height = K + (H - 1) + 1 = 6; M[m, t] = clip(3 + t - m, 0, 3).
  const Rows expected = {{3, 3, 3}, {2, 3, 3}, {1, 2, 3}, {0, 1, 2}, {0, 0, 1}, {0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kPyramid, 3, 3)), expected);
}

TEST(SchedulingMatrixTest, PyramidWithHalfUncertainty) {
  // u = 0.5: offsets int(t * 0.5) = 0, 0, 1, 1; height = 2 + int(1.5) + 1 = 4.
  const Rows expected = {{2, 2, 2, 2}, {1, 1, 2, 2}, {0, 0, 1, 1}, {0, 0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kPyramid, 2, 4, 0.5)), expected);
}

TEST(SchedulingMatrixTest, PyramidWithDoubleUncertainty) {
  // u = 2: offsets 0, 2; height = 2 + 2 + 1 = 5.
  const Rows expected = {{2, 2}, {1, 2}, {0, 2}, {0, 1}, {0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kPyramid, 2, 2, 2.0)), expected);
}

TEST(SchedulingMatrixTest, PyramidNeedsKPlusHMinusOneCalls) {
  for (int k : {1, 4, 10}) {
    for (int h : {1, 8, 32}) {
      EXPECT_EQ(MakeSchedulingMatrix(ScheduleKind::kPyramid, k, h).num_calls(), k + h - 1);
    }
  }
}

TEST(SchedulingMatrixTest, FullSequence) {
  const Rows expected = {{2, 2, 2}, {1, 1, 1}, {0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kFullSequence, 2, 3, 0.7)), expected);
}

TEST(SchedulingMatrixTest, AutoregressiveIsPyramidWithUEqualK) {
  // u = K = 2: token t starts descending after token t - 1 is clean.
  const Rows expected = {{2, 2, 2}, {1, 2, 2}, {0, 2, 2}, {0, 1, 2}, {0, 0, 2}, {0, 0, 1},
                         {0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kAutoregressive, 2, 3, 1.0)), expected);
}

TEST(SchedulingMatrixTest, TrapezoidOddHorizonMatchesReference) {
  // H = 5, u = 1: offsets 0 1 2 2 1 and height K + (H + 1) / 2 = 5, as in
  // the Diffusion Forcing reference.
  const Rows expected = {{2, 2, 2, 2, 2}, {1, 2, 2, 2, 2}, {0, 1, 2, 2, 1},
                         {0, 0, 1, 1, 0}, {0, 0, 0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kTrapezoid, 2, 5)), expected);
}

TEST(SchedulingMatrixTest, TrapezoidEvenHorizonDenoisesEveryToken) {
  // H = 4: offsets 0 1 2 1 (the middle token is filled; the reference leaves
  // it at level 0 from the start), height 2 + 2 + 1 = 5.
  const Rows expected = {{2, 2, 2, 2}, {1, 2, 2, 2}, {0, 1, 2, 1}, {0, 0, 1, 0}, {0, 0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kTrapezoid, 2, 4)), expected);
}

TEST(SchedulingMatrixTest, TrapezoidWithHalfUncertaintyEndsClean) {
  // H = 5, u = 0.5: offsets int(0 1 2 2 1 * 0.5) = 0 0 1 1 0; height 2 + 1 + 1.
  const Rows expected = {{2, 2, 2, 2, 2}, {1, 1, 2, 2, 1}, {0, 0, 1, 1, 0}, {0, 0, 0, 0, 0}};
  EXPECT_EQ(ToRows(MakeSchedulingMatrix(ScheduleKind::kTrapezoid, 2, 5, 0.5)), expected);
}

TEST(SchedulingMatrixTest, EveryKindStartsAtKEndsCleanAndMovesOneLevelPerCall) {
  for (auto kind : {ScheduleKind::kPyramid, ScheduleKind::kFullSequence,
                    ScheduleKind::kAutoregressive, ScheduleKind::kTrapezoid}) {
    for (int k : {1, 4}) {
      for (int h : {1, 2, 7, 8}) {
        for (double u : {0.5, 1.0, 3.0}) {
          const SchedulingMatrix m = MakeSchedulingMatrix(kind, k, h, u);
          for (int t = 0; t < h; ++t) {
            EXPECT_EQ(m.level(0, t), k);
            EXPECT_EQ(m.level(m.rows() - 1, t), 0);
            for (int r = 0; r + 1 < m.rows(); ++r) {
              const int drop = m.level(r, t) - m.level(r + 1, t);
              EXPECT_TRUE(drop == 0 || drop == 1);
            }
          }
        }
      }
    }
  }
}

TEST(SchedulingMatrixTest, BadInputThrows) {
  EXPECT_THROW(MakeSchedulingMatrix(ScheduleKind::kPyramid, 0, 4), std::invalid_argument);
  EXPECT_THROW(MakeSchedulingMatrix(ScheduleKind::kPyramid, 4, 0), std::invalid_argument);
  EXPECT_THROW(MakeSchedulingMatrix(ScheduleKind::kTrapezoid, 4, 4, -0.5), std::invalid_argument);
  EXPECT_THROW(ParseScheduleKind("zigzag"), std::invalid_argument);
  EXPECT_EQ(ParseScheduleKind("trapezoid"), ScheduleKind::kTrapezoid);
}

// int(offset * u) and the height used to overflow int and build a wrong
// matrix; every kind now refuses a matrix above the documented bound.
TEST(SchedulingMatrixTest, ImpossiblyLargeMatricesThrowNamingTheValues) {
  struct Case {
    ScheduleKind kind;
    int levels, horizon;
    double uncertainty;
    std::string named;  // part of the message
  };
  const Case cases[] = {
      {ScheduleKind::kPyramid, 16, 8, 1e10, "K = 16, H = 8, u = 1e+10"},
      // Trapezoid offsets reach (H + 1) / 2 = 4.
      {ScheduleKind::kTrapezoid, 16, 8, 1e10, "u = 1e+10"},
      // Autoregressive: u = K, so (H - 1) * K + K + 1 = 2^26 + 1 rows of 2^10.
      {ScheduleKind::kAutoregressive, 1 << 16, 1 << 10, 1.0, "u = 65536"},
      // K + 1 rows overflows int for K = INT_MAX.
      {ScheduleKind::kFullSequence, INT_MAX, 1, 1.0, "K = " + std::to_string(INT_MAX)},
  };
  for (const Case& c : cases) {
    try {
      MakeSchedulingMatrix(c.kind, c.levels, c.horizon, c.uncertainty);
      ADD_FAILURE() << ScheduleKindName(c.kind) << " with " << c.named << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.named), std::string::npos) << e.what();
    }
  }
}

TEST(SchedulingMatrixTest, MatrixAtTheBoundIsBuilt) {
  // Full sequence: (K + 1) * H = 2^23 * 2 = kMaxSchedulingMatrixLevels.
  const int levels = (1 << 23) - 1;
  const SchedulingMatrix m = MakeSchedulingMatrix(ScheduleKind::kFullSequence, levels, 2);
  EXPECT_EQ(static_cast<int64_t>(m.rows()) * m.horizon(), kMaxSchedulingMatrixLevels);
  EXPECT_EQ(m.level(0, 1), levels);
  EXPECT_EQ(m.level(m.rows() - 1, 1), 0);
  EXPECT_THROW(MakeSchedulingMatrix(ScheduleKind::kFullSequence, levels + 1, 2),
               std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
