#include "plan_schedule.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace dfmpc::planner {
namespace {

std::vector<int> Row(const worldmodel::SchedulingMatrix& m, int row) {
  std::vector<int> levels;
  for (int t = 0; t < m.horizon(); ++t) levels.push_back(m.level(row, t));
  return levels;
}

TEST(PlanScheduleTest, RestingLevelsRoundUpSoOnlyTheFirstTokenIsClean) {
  // K = 4, H = 8, u = 0.5: ceil(t / 2).
  EXPECT_EQ(RestingLevels(4, 8, 0.5), (std::vector<int>{0, 1, 1, 2, 2, 3, 3, 4}));
  // u = 1 is the plain pyramid row K, capped at K.
  EXPECT_EQ(RestingLevels(3, 5, 1.0), (std::vector<int>{0, 1, 2, 3, 3}));
  // t * u = 3 * (1/3) must not round up to 2 through a rounding error.
  EXPECT_EQ(RestingLevels(1, 4, 1.0 / 3.0), (std::vector<int>{0, 1, 1, 1}));
}

TEST(PlanScheduleTest, FromNoiseStopsAtRestOrCompletesThePyramid) {
  const worldmodel::SchedulingMatrix to_rest = FromNoiseProgram(2, 3, 1.0, false);
  ASSERT_EQ(to_rest.rows(), 3);
  EXPECT_EQ(Row(to_rest, 0), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(Row(to_rest, 1), (std::vector<int>{1, 2, 2}));
  EXPECT_EQ(Row(to_rest, 2), RestingLevels(2, 3, 1.0));
  const worldmodel::SchedulingMatrix complete = FromNoiseProgram(2, 3, 1.0, true);
  ASSERT_EQ(complete.rows(), 2 + 2 + 1);  // K + ceil((H - 1) u) + 1
  EXPECT_EQ(Row(complete, 3), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(Row(complete, 4), (std::vector<int>{0, 0, 0}));
  // The first K + 1 rows of both are the same.
  for (int row = 0; row < 3; ++row) EXPECT_EQ(Row(complete, row), Row(to_rest, row));
}

TEST(PlanScheduleTest, WarmStepShiftsRestingLevelsAndReturnsToRest) {
  // K = 4, H = 8, u = 0.5: rest 0 1 1 2 2 3 3 4; shifted 1 1 2 2 3 3 4 + fresh 4.
  const worldmodel::SchedulingMatrix one_call = WarmProgram(4, 8, 0.5, 1, 0);
  ASSERT_EQ(one_call.rows(), 2);
  EXPECT_EQ(Row(one_call, 0), (std::vector<int>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(Row(one_call, 1), RestingLevels(4, 8, 0.5));
  // r = 2 re-noises one level (capped at K), then two calls of one level.
  const worldmodel::SchedulingMatrix two_calls = WarmProgram(4, 8, 0.5, 2, 0);
  ASSERT_EQ(two_calls.rows(), 3);
  EXPECT_EQ(Row(two_calls, 0), (std::vector<int>{2, 2, 3, 3, 4, 4, 4, 4}));
  EXPECT_EQ(Row(two_calls, 1), (std::vector<int>{1, 1, 2, 2, 3, 3, 3, 4}));
  EXPECT_EQ(Row(two_calls, 2), RestingLevels(4, 8, 0.5));
  // Extra re-noising with one call: a DDIM jump straight back to rest.
  const worldmodel::SchedulingMatrix jump = WarmProgram(4, 8, 0.5, 1, 2);
  EXPECT_EQ(Row(jump, 0), (std::vector<int>{3, 3, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(Row(jump, 1), RestingLevels(4, 8, 0.5));
}

TEST(PlanScheduleTest, AShiftOfSeveralStepsStillTakesOneCallBackToRest) {
  // K = 4, H = 8, u = 0.5: rest 0 1 1 2 2 3 3 4; shifted by 3: 2 2 3 3 4 + 3 fresh at 4.
  const worldmodel::SchedulingMatrix behind = WarmProgram(4, 8, 0.5, 1, 0, 3);
  ASSERT_EQ(behind.rows(), 2);
  EXPECT_EQ(Row(behind, 0), (std::vector<int>{2, 2, 3, 3, 4, 4, 4, 4}));
  EXPECT_EQ(Row(behind, 1), RestingLevels(4, 8, 0.5));
  EXPECT_EQ(Row(WarmProgram(4, 8, 0.5, 1, 1, 3), 0), (std::vector<int>{3, 3, 4, 4, 4, 4, 4, 4}));
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, 0, 8), std::invalid_argument);  // nothing left
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, 0, 0), std::invalid_argument);
}

TEST(PlanScheduleTest, BlockCacheRunsTheFrontAndLetsTheRestWait) {
  // K = 4, H = 8, u = 0.5, renoise 1: rest 0 1 1 2 2 3 3 4.
  const std::vector<int> rest = RestingLevels(4, 8, 0.5);
  // Three front tokens run; the others keep their shifted levels in every
  // row, so the step's calls never reach them.
  const worldmodel::SchedulingMatrix front = WarmProgram(4, 8, 0.5, 1, 1, 1, rest, 3);
  EXPECT_EQ(Row(front, 0), (std::vector<int>{2, 2, 3, 2, 3, 3, 4, 4}));
  EXPECT_EQ(Row(front, 1), (std::vector<int>{0, 1, 1, 2, 3, 3, 4, 4}));
  // The next step shifts the waiting tokens again, levels and all (token 3
  // now waits at level 3, one above its resting level), and the fresh token
  // enters at K.
  const worldmodel::SchedulingMatrix next = WarmProgram(4, 8, 0.5, 1, 1, 1, Row(front, 1), 3);
  EXPECT_EQ(Row(next, 0), (std::vector<int>{2, 2, 3, 3, 3, 4, 4, 4}));
  EXPECT_EQ(Row(next, 1), (std::vector<int>{0, 1, 1, 3, 3, 4, 4, 4}));
  // A refresh takes every token back to rest however long it waited; one
  // that waited starts from its own level, above where re-noising a
  // resting token would put it (renoise 0 here: tokens 2 to 5).
  const worldmodel::SchedulingMatrix refresh = WarmProgram(4, 8, 0.5, 1, 0, 1, Row(next, 1), 8);
  EXPECT_EQ(Row(refresh, 0), (std::vector<int>{1, 1, 3, 3, 4, 4, 4, 4}));
  EXPECT_EQ(Row(refresh, 1), rest);
  // Kept levels must be H long, between rest and K.
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, 1, 1, std::vector<int>(7, 4), 3), std::invalid_argument);
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, 1, 1, std::vector<int>(8, 5), 3), std::invalid_argument);
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, 1, 1, std::vector<int>(8, 0), 3), std::invalid_argument);
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, 1, 1, rest, 0), std::invalid_argument);
}

TEST(PlanScheduleTest, RejectsImpossiblePrograms) {
  // ceil(H * u) = 2 < K = 4: the fresh token could not enter at pure noise.
  EXPECT_THROW(WarmProgram(4, 4, 0.5, 1, 0), std::invalid_argument);
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 0, 0), std::invalid_argument);
  EXPECT_THROW(WarmProgram(4, 8, 0.5, 1, -1), std::invalid_argument);
  EXPECT_THROW(FromNoiseProgram(0, 8, 0.5, false), std::invalid_argument);
  EXPECT_THROW(RestingLevels(4, -1, 0.5), std::invalid_argument);
  EXPECT_THROW(WarmProgram(4, -1, 0.5, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::planner
