// The AsyncPlanner: a planning thread behind a control thread that never
// waits longer than its bound. Built also under ThreadSanitizer in CI
// (scripts/test.sh), so every test here doubles as a race check.
#include "dfmpc/planner/async_planner.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <thread>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

using std::chrono::milliseconds;

AsyncPlannerOptions Wait(std::chrono::microseconds max_wait) {
  AsyncPlannerOptions options;
  options.max_wait = max_wait;
  return options;
}

void ExpectUsableAction(const Eigen::VectorXd& action) {
  ASSERT_EQ(action.size(), 1);
  EXPECT_TRUE(action.allFinite()) << action.transpose();
  EXPECT_LE(action.cwiseAbs().maxCoeff(), 1.0);
}

TEST(AsyncPlannerTest, WithTimeToPlanItActsExactlyLikeTheSynchronousPlanner) {
  const PlannerOptions options = Small(PlanMode::kWarm);
  AsyncPlanner async(MakePlanner(options), Wait(std::chrono::seconds(60)));
  auto sync = MakePlanner(options);
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(3);
  async.Reset(observation);
  sync->Reset(observation);
  for (int s = 0; s < 20; ++s) {
    const Eigen::VectorXd action = async.Step(observation);
    ASSERT_EQ(action, sync->Act(observation)) << "step " << s;
    observation = env->Step(action).observation;
  }
  const AsyncStats stats = async.stats();
  EXPECT_EQ(stats.steps, 20);
  EXPECT_EQ(stats.misses, 0);
  EXPECT_EQ(stats.max_action_age, 0);
  EXPECT_EQ(stats.plans, 19);  // every step after the first
  EXPECT_GT(stats.total_plan_ms, 0.0);
  EXPECT_LE(stats.max_plan_ms, stats.total_plan_ms);
}

TEST(AsyncPlannerTest, ADeadlineShorterThanAModelCallStillYieldsAnActionEveryPeriod) {
  // max_wait 0: Step returns as soon as it has queued the observation, long
  // before a model call could finish, so the action is the previous plan's
  // for the elapsed steps. Periods of 2 ms let the planner catch up now and
  // then (a step of these options takes about a millisecond).
  AsyncPlanner async(MakePlanner(Small(PlanMode::kWarm)), Wait(std::chrono::microseconds(0)));
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(4);
  async.Reset(observation);
  const int steps = 60;
  for (int s = 0; s < steps; ++s) {
    const Eigen::VectorXd action = async.Step(observation);
    ExpectUsableAction(action);
    observation = env->Step(action).observation;
    std::this_thread::sleep_for(milliseconds(2));
  }
  const AsyncStats stats = async.stats();
  EXPECT_EQ(stats.steps, steps);
  EXPECT_GT(stats.misses, 0);
  EXPECT_GE(stats.max_action_age, 1);
  EXPECT_GE(stats.total_action_age, stats.misses);
  EXPECT_GT(stats.plans, 0);  // planning went on behind the control loop
  EXPECT_EQ(stats.planner_errors, 0);
}

TEST(AsyncPlannerTest, ShutsDownCleanlyWhilePlanning) {
  PlannerOptions options = Small(PlanMode::kReplan);  // K + H - 1 calls per plan: slow
  for (int trial = 0; trial < 3; ++trial) {
    auto async = std::make_unique<AsyncPlanner>(MakePlanner(options),
                                                Wait(std::chrono::microseconds(0)));
    auto env = envs::MakeEnv(kPendulum);
    Eigen::VectorXd observation = env->Reset(trial);
    async->Reset(observation);
    for (int s = 0; s < 3; ++s) {
      observation = env->Step(async->Step(observation)).observation;
    }
    async.reset();  // the planning thread is mid-plan; this must not hang or race
  }
}

TEST(AsyncPlannerTest, ResetMidEpisodeDropsTheOldEpisodesPlans) {
  AsyncPlanner async(MakePlanner(Small(PlanMode::kWarm)), Wait(std::chrono::microseconds(0)));
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(6);
  async.Reset(observation);
  for (int s = 0; s < 5; ++s) observation = env->Step(async.Step(observation)).observation;
  observation = env->Reset(7);
  async.Reset(observation);  // while the last steps may still be planned
  EXPECT_EQ(async.stats().steps, 0);
  // The first Step after Reset reads Reset's own plan: no wait, no miss.
  ExpectUsableAction(async.Step(observation));
  EXPECT_EQ(async.stats().misses, 0);
  EXPECT_EQ(async.stats().max_action_age, 0);
}

TEST(AsyncPlannerTest, BadUseIsAClearError) {
  EXPECT_THROW(AsyncPlanner(nullptr), std::invalid_argument);
  EXPECT_THROW(AsyncPlanner(MakePlanner(Small(PlanMode::kWarm)), Wait(std::chrono::microseconds(-1))),
               std::invalid_argument);
  AsyncPlanner async(MakePlanner(Small(PlanMode::kWarm)));
  const Eigen::Vector3d good(1, 0, 0), other(0.99, 0.14, 0.5);
  EXPECT_THROW(async.Step(good), std::invalid_argument);  // before Reset
  EXPECT_THROW(async.Reset(Eigen::Vector2d(1, 0)), std::invalid_argument);
  EXPECT_THROW(async.Step(good), std::invalid_argument);  // that Reset failed
  async.Reset(good);
  EXPECT_THROW(async.Step(other), std::invalid_argument);  // not Reset's observation
  EXPECT_THROW(async.Step(Eigen::Vector3d(1, std::nan(""), 0)), std::invalid_argument);
  EXPECT_EQ(async.stats().steps, 0);
  ExpectUsableAction(async.Step(good));
  ExpectUsableAction(async.Step(other));
  EXPECT_EQ(async.observation_dim(), 3);
  EXPECT_EQ(async.action_dim(), 1);
}

}  // namespace
}  // namespace dfmpc::planner
