// The planner's queue of observed control steps: numbering, the step-0
// rule, dropping the oldest when full, and undoing a failed step.
#include "step_queue.h"

#include <gtest/gtest.h>

#include <Eigen/Core>

namespace dfmpc::planner {
namespace {

Eigen::VectorXd Obs(double value) { return Eigen::VectorXd::Constant(2, value); }
Eigen::VectorXd Act(double value) { return Eigen::VectorXd::Constant(1, value); }

TEST(StepQueueTest, ResetQueuesStepZeroAsItsOwnPreviousWithTheZeroAction) {
  StepQueue queue(4, 2, 1);
  queue.Reset(Obs(1));
  ASSERT_EQ(queue.size(), 1);
  EXPECT_EQ(queue.observation(0), Obs(1));
  EXPECT_EQ(queue.previous(0), Obs(1));  // a zero change feature, as in training
  EXPECT_EQ(queue.action(0), Act(0));
  EXPECT_EQ(queue.newest_step(), 0);
  EXPECT_TRUE(queue.awaiting_first_step());
}

TEST(StepQueueTest, StepZeroIsConfirmedOnlyByResetsObservationBeforeAnythingElse) {
  StepQueue queue(4, 2, 1);
  queue.Reset(Obs(1));
  queue.Take(1);
  EXPECT_FALSE(queue.ConfirmStepZero(Obs(1.000001)));
  EXPECT_TRUE(queue.awaiting_first_step());
  EXPECT_TRUE(queue.ConfirmStepZero(Obs(1)));
  EXPECT_FALSE(queue.awaiting_first_step());
  EXPECT_TRUE(queue.empty());
  EXPECT_FALSE(queue.ConfirmStepZero(Obs(1)));  // only once
  // After an Observe, Reset's observation is an ordinary new step.
  queue.Reset(Obs(1));
  queue.Take(1);
  queue.Observe(Obs(1), Act(0.5));
  EXPECT_FALSE(queue.ConfirmStepZero(Obs(1)));
  EXPECT_EQ(queue.newest_step(), 1);
}

TEST(StepQueueTest, StepsKeepTheirPreviousObservationAcrossTakes) {
  StepQueue queue(4, 2, 1);
  queue.Reset(Obs(0));
  queue.Take(1);
  for (int s = 1; s <= 3; ++s) queue.Observe(Obs(s), Act(s / 10.0));
  ASSERT_EQ(queue.size(), 3);
  EXPECT_EQ(queue.previous(0), Obs(0));
  EXPECT_EQ(queue.observation(2), Obs(3));
  EXPECT_EQ(queue.action(1), Act(0.2));
  queue.Take(2);
  ASSERT_EQ(queue.size(), 1);
  EXPECT_EQ(queue.previous(0), Obs(2));
  EXPECT_EQ(queue.newest_observation(), Obs(3));
  EXPECT_EQ(queue.newest_step(), 3);
  queue.Take(1);
  EXPECT_EQ(queue.newest_observation(), Obs(3));  // still readable once taken
}

TEST(StepQueueTest, AFullQueueDropsTheOldestAndAsksForAHistoryRestart) {
  StepQueue queue(3, 2, 1);
  queue.Reset(Obs(0));
  queue.Take(1);
  for (int s = 1; s <= 3; ++s) queue.Observe(Obs(s), Act(0));
  EXPECT_FALSE(queue.restart_history());
  queue.Observe(Obs(4), Act(0));
  EXPECT_TRUE(queue.restart_history());
  ASSERT_EQ(queue.size(), 3);
  EXPECT_EQ(queue.observation(0), Obs(2));
  EXPECT_EQ(queue.previous(0), Obs(1));  // its change feature still follows step 1
  EXPECT_EQ(queue.newest_step(), 4);
  queue.Take(0);
  EXPECT_TRUE(queue.restart_history());  // nothing taken: the restart is still due
  queue.Take(1);
  EXPECT_FALSE(queue.restart_history());
}

TEST(StepQueueTest, RestoreUndoesAnObserveThatDroppedTheOldest) {
  StepQueue queue(2, 2, 1);
  queue.Reset(Obs(0));
  queue.Take(1);
  queue.Observe(Obs(1), Act(0.1));
  queue.Observe(Obs(2), Act(0.2));
  const StepQueue::Mark mark = queue.Save();
  queue.Observe(Obs(3), Act(0.3));
  ASSERT_TRUE(queue.restart_history());
  queue.Restore(mark);
  EXPECT_FALSE(queue.restart_history());
  ASSERT_EQ(queue.size(), 2);
  EXPECT_EQ(queue.previous(0), Obs(0));
  EXPECT_EQ(queue.observation(0), Obs(1));
  EXPECT_EQ(queue.observation(1), Obs(2));
  EXPECT_EQ(queue.action(1), Act(0.2));
  EXPECT_EQ(queue.newest_step(), 2);
}

}  // namespace
}  // namespace dfmpc::planner
