// The planner's predictions of its model calls' durations.
#include "call_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace dfmpc::planner {
namespace {

// Records a call of `tokens` that takes at least `ms`.
void Call(CallClock& clock, CallKind kind, int tokens, int ms) {
  clock.Begin(kind, tokens);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  clock.End();
}

TEST(CallClockTest, NothingMeasuredPredictsZero) {
  CallClock clock(8);
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 4), 0.0);
  Call(clock, CallKind::kContext, 1, 1);
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 4), 0.0);  // another kind
  EXPECT_GE(clock.Predict(CallKind::kContext, 1), 1e-3);
}

TEST(CallClockTest, PredictsTheSecondLongestOfTheRecentCalls) {
  CallClock clock(8);
  Call(clock, CallKind::kPlan, 4, 1);
  const double one = clock.Predict(CallKind::kPlan, 4);
  EXPECT_GE(one, 1e-3);  // a single sample is its own prediction
  Call(clock, CallKind::kPlan, 4, 30);  // a stall: ignored while it is the longest alone
  EXPECT_LT(clock.Predict(CallKind::kPlan, 4), 30e-3);
  Call(clock, CallKind::kPlan, 4, 20);
  EXPECT_GE(clock.Predict(CallKind::kPlan, 4), 20e-3);
  // Forgotten after kSamples newer calls.
  for (int i = 0; i < CallClock::kSamples; ++i) Call(clock, CallKind::kPlan, 4, 1);
  EXPECT_LT(clock.Predict(CallKind::kPlan, 4), 20e-3);
}

TEST(CallClockTest, UnmeasuredSizesBorrowTheNearestLargerOrScaleASmallerOne) {
  CallClock clock(8);
  Call(clock, CallKind::kPlan, 2, 4);
  const double two = clock.Predict(CallKind::kPlan, 2);
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 1), two);
  EXPECT_DOUBLE_EQ(clock.Predict(CallKind::kPlan, 8), two * 4);
  Call(clock, CallKind::kPlan, 6, 4);
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 3), clock.Predict(CallKind::kPlan, 6));
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 100), clock.Predict(CallKind::kPlan, 8));  // clamped
}

TEST(CallClockTest, OldSamplesDecaySoThatAPlannerThatStoppedCallingTriesAgain) {
  CallClock clock(4);
  Call(clock, CallKind::kPlan, 2, 4);
  const auto now = CallClock::Clock::now();
  const double fresh = clock.Predict(CallKind::kPlan, 2, now);
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 2, now + CallClock::kFresh / 2), fresh);
  const auto one_half_life = now + CallClock::kFresh + CallClock::kHalfLife;
  EXPECT_NEAR(clock.Predict(CallKind::kPlan, 2, one_half_life), fresh / 2, fresh * 0.01);
  EXPECT_LT(clock.Predict(CallKind::kPlan, 2, one_half_life + 10 * CallClock::kHalfLife),
            fresh / 1000);
}

TEST(CallClockTest, BeginEndsTheCallInProgress) {
  CallClock clock(4);
  clock.Begin(CallKind::kPlan, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  clock.Begin(CallKind::kPlan, 2);
  clock.End();
  clock.End();  // nothing running: no sample
  EXPECT_GE(clock.Predict(CallKind::kPlan, 1), 2e-3);
  EXPECT_LT(clock.Predict(CallKind::kPlan, 2), 2e-3);
}

}  // namespace
}  // namespace dfmpc::planner
