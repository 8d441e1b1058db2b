// The planner's predictions of its model calls' durations. Calls are given
// their begin and end times, so the tests check the clock's arithmetic and
// ordering, not how long a sleep takes on a loaded machine.
#include "call_clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace dfmpc::planner {
namespace {

using Clock = CallClock::Clock;
using std::chrono::milliseconds;

// A clock and a time line that moves only when a call is recorded.
class CallClockTest : public testing::Test {
 protected:
  // Records a call of `tokens` lasting exactly `ms`, starting now.
  void Call(CallClock& clock, CallKind kind, int tokens, int ms) {
    clock.Begin(kind, tokens, now_);
    now_ += milliseconds(ms);
    clock.End(now_);
  }
  double Predict(const CallClock& clock, CallKind kind, int tokens) const {
    return clock.Predict(kind, tokens, now_);
  }

  Clock::time_point now_ = Clock::now();
};

TEST_F(CallClockTest, NothingMeasuredPredictsZero) {
  CallClock clock(8);
  EXPECT_EQ(Predict(clock, CallKind::kPlan, 4), 0.0);
  Call(clock, CallKind::kContext, 1, 1);
  EXPECT_EQ(Predict(clock, CallKind::kPlan, 4), 0.0);  // another kind
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kContext, 1), 1e-3);
}

TEST_F(CallClockTest, PredictsTheSecondLongestOfTheRecentCalls) {
  CallClock clock(8);
  Call(clock, CallKind::kPlan, 4, 1);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 4), 1e-3);  // a single sample is its own
  Call(clock, CallKind::kPlan, 4, 30);  // a stall: ignored while it is the longest alone
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 4), 1e-3);
  Call(clock, CallKind::kPlan, 4, 20);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 4), 20e-3);
  // The last kSamples calls count: the 30 ms stall is forgotten after
  // kSamples - 1 newer ones, and the 20 ms call is then alone again.
  for (int i = 0; i < CallClock::kSamples - 2; ++i) Call(clock, CallKind::kPlan, 4, 1);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 4), 20e-3);
  Call(clock, CallKind::kPlan, 4, 1);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 4), 1e-3);
}

TEST_F(CallClockTest, UnmeasuredSizesBorrowTheNearestLargerOrScaleASmallerOne) {
  CallClock clock(8);
  Call(clock, CallKind::kPlan, 2, 4);
  const double two = Predict(clock, CallKind::kPlan, 2);
  EXPECT_DOUBLE_EQ(two, 4e-3);
  EXPECT_EQ(Predict(clock, CallKind::kPlan, 1), two);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 8), two * 4);
  Call(clock, CallKind::kPlan, 6, 5);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 3), 5e-3);
  EXPECT_EQ(Predict(clock, CallKind::kPlan, 100), Predict(clock, CallKind::kPlan, 8));  // clamped
}

TEST_F(CallClockTest, OldSamplesDecaySoThatAPlannerThatStoppedCallingTriesAgain) {
  CallClock clock(4);
  Call(clock, CallKind::kPlan, 2, 4);
  const double fresh = Predict(clock, CallKind::kPlan, 2);
  EXPECT_EQ(clock.Predict(CallKind::kPlan, 2, now_ + CallClock::kFresh / 2), fresh);
  const auto one_half_life = now_ + CallClock::kFresh + CallClock::kHalfLife;
  EXPECT_NEAR(clock.Predict(CallKind::kPlan, 2, one_half_life), fresh / 2, fresh * 0.01);
  EXPECT_LT(clock.Predict(CallKind::kPlan, 2, one_half_life + 10 * CallClock::kHalfLife),
            fresh / 1000);
}

TEST_F(CallClockTest, BeginEndsTheCallInProgress) {
  CallClock clock(4);
  clock.Begin(CallKind::kPlan, 1, now_);
  now_ += milliseconds(2);
  clock.Begin(CallKind::kPlan, 2, now_);  // ends the first call, 2 ms long
  now_ += milliseconds(3);
  clock.End(now_);
  clock.End(now_ + milliseconds(50));  // nothing running: no sample
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 1), 2e-3);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 2), 3e-3);
}

TEST_F(CallClockTest, AStoppedCallIsCompletedAtItsPredictedPaceAndAnAbandonedOneRecordsNothing) {
  CallClock clock(4);
  clock.Begin(CallKind::kPlan, 3, now_);
  now_ += milliseconds(1);
  clock.EndPartly(0.25, now_);  // a quarter of its blocks in 1 ms, nothing predicted
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 3), 4e-3);
  clock.Begin(CallKind::kPlan, 3, now_);
  now_ += milliseconds(9);      // preempted after a quarter of its blocks
  clock.EndPartly(0.25, now_);  // 9 ms + three quarters of the 4 ms predicted
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 3), 4e-3);  // the second longest
  Call(clock, CallKind::kPlan, 3, 20);
  EXPECT_DOUBLE_EQ(Predict(clock, CallKind::kPlan, 3), 12e-3);
  clock.Begin(CallKind::kContext, 1, now_);
  now_ += milliseconds(7);
  clock.Abandon();
  clock.End(now_);
  EXPECT_EQ(Predict(clock, CallKind::kContext, 1), 0.0);
}

}  // namespace
}  // namespace dfmpc::planner
