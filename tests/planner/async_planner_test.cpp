// The AsyncPlanner: a planning thread behind a control thread that never
// waits longer than its bound. Built also under ThreadSanitizer in CI
// (scripts/test.sh), so every test here doubles as a race check.
#include "dfmpc/planner/async_planner.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <thread>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "sabotaged_cost.h"
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

// Drives an AsyncPlanner with all the time it needs and a synchronous
// planner side by side for `steps` steps from `seed`, the first Step's and
// Act's observation offset by `reread` from Reset's (a second read of the
// robot); every action must be equal. Returns the AsyncPlanner's stats.
AsyncStats ActLikeTheSynchronousPlanner(std::uint64_t seed, int steps, double reread) {
  const PlannerOptions options = Small(PlanMode::kWarm);
  AsyncPlanner async(MakePlanner(options), Wait(std::chrono::seconds(60)));
  auto sync = MakePlanner(options);
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(seed);
  async.Reset(observation);
  sync->Reset(observation);
  observation[2] += reread;
  for (int s = 0; s < steps; ++s) {
    const Eigen::VectorXd action = async.Step(observation);
    EXPECT_EQ(action, sync->Act(observation)) << "step " << s;
    observation = env->Step(action).observation;
  }
  return async.stats();
}

TEST(AsyncPlannerTest, WithTimeToPlanItActsExactlyLikeTheSynchronousPlanner) {
  const AsyncStats stats = ActLikeTheSynchronousPlanner(3, 20, 0.0);
  EXPECT_EQ(stats.steps, 20);
  EXPECT_EQ(stats.misses, 0);
  EXPECT_EQ(stats.max_action_age, 0);
  EXPECT_EQ(stats.plans, 19);  // every step after the first
  EXPECT_GT(stats.total_plan_ms, 0.0);
  EXPECT_LE(stats.max_plan_ms, stats.total_plan_ms);
}

// The reported case: a controller read its robot once for Reset and again
// for the first Step, and died on a difference of 1e-6.
TEST(AsyncPlannerTest, TheFirstStepMayBringANewObservationLikeTheFirstAct) {
  const AsyncStats stats = ActLikeTheSynchronousPlanner(8, 5, 1e-6);
  EXPECT_EQ(stats.misses, 0);
  EXPECT_EQ(stats.plans, 5);  // the first Step was a step of its own
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
    auto async =
        std::make_unique<AsyncPlanner>(MakePlanner(options), Wait(std::chrono::microseconds(0)));
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
  EXPECT_THROW(
      AsyncPlanner(MakePlanner(Small(PlanMode::kWarm)), Wait(std::chrono::microseconds(-1))),
      std::invalid_argument);
  // The reported case: max() overflowed inside wait_for, and Step returned
  // at once.
  EXPECT_THROW(
      AsyncPlanner(MakePlanner(Small(PlanMode::kWarm)), Wait(std::chrono::microseconds::max())),
      std::invalid_argument);
  AsyncPlannerOptions bad_period;
  bad_period.period = std::chrono::hours(2);
  EXPECT_THROW(AsyncPlanner(MakePlanner(Small(PlanMode::kWarm)), bad_period),
               std::invalid_argument);
  AsyncPlanner async(MakePlanner(Small(PlanMode::kWarm)));
  const Eigen::Vector3d good(1, 0, 0), other(0.99, 0.14, 0.5);
  EXPECT_THROW(async.Step(good), std::invalid_argument);  // before Reset
  EXPECT_THROW(async.Reset(Eigen::Vector2d(1, 0)), std::invalid_argument);
  EXPECT_THROW(async.Step(good), std::invalid_argument);  // that Reset failed
  async.Reset(good);
  EXPECT_THROW(async.Step(Eigen::Vector3d(1, std::nan(""), 0)), std::invalid_argument);
  EXPECT_EQ(async.stats().steps, 0);
  ExpectUsableAction(async.Step(good));
  ExpectUsableAction(async.Step(other));
  EXPECT_EQ(async.observation_dim(), 3);
  EXPECT_EQ(async.action_dim(), 1);
}

// The reported case: with every plan non-finite, 39 of 40 actions were zero
// and the stats said nothing.
TEST(AsyncPlannerTest, FallbacksAndTheLastStepShowInTheStats) {
  Sabotage sabotage;
  sabotage.nan_now = true;
  const PlannerOptions options = Small(PlanMode::kWarm);
  AsyncPlanner async(
      std::make_unique<Planner>(Pendulum(), std::make_unique<SabotagedCost>(sabotage), options),
      Wait(std::chrono::seconds(60)));
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(9);
  async.Reset(observation);
  for (int s = 0; s < 6; ++s) observation = env->Step(async.Step(observation)).observation;
  const AsyncStats stats = async.stats();
  EXPECT_EQ(stats.plans, 5);
  EXPECT_EQ(stats.fallbacks, 5);
  EXPECT_TRUE(stats.last_step.fallback);
  EXPECT_EQ(stats.last_step.calls, options.levels);  // no plan left: from noise
  EXPECT_EQ(stats.planner_errors, 0);
}

// A deadline the planner cannot meet: each optimization is deferred, then
// run without a deadline (a late plan beats none), and the stats say so.
TEST(AsyncPlannerTest, OptimizationsThatCannotMeetTheirDeadlineRunLateAndShowInTheStats) {
  AsyncPlannerOptions options = Wait(std::chrono::microseconds(1));  // deadline: 1 us - margin
  options.margin = std::chrono::microseconds(0);
  AsyncPlanner async(MakePlanner(Small(PlanMode::kWarm)), options);
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(10);
  async.Reset(observation);
  for (int s = 0; s < 5; ++s) {
    const Eigen::VectorXd action = async.Step(observation);
    ExpectUsableAction(action);
    observation = env->Step(action).observation;
    std::this_thread::sleep_for(milliseconds(2));
  }
  // Each late plan runs to its end, so on a slow machine (or under a
  // sanitizer) none may have finished yet: wait for the first, bounded.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (async.stats().plans < 1 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  const AsyncStats stats = async.stats();
  EXPECT_GE(stats.plans, 1);
  EXPECT_EQ(stats.late, stats.plans);  // not one could start in 1 us
  EXPECT_FALSE(stats.last_step.deferred);
  EXPECT_GT(stats.misses, 0);
  EXPECT_EQ(stats.planner_errors, 0);
}

// The reported case: the destructor waited for the whole optimization (up
// to 116 ms in replan mode); now for the model call in progress.
TEST(AsyncPlannerTest, DestructionWaitsForOneModelCallNotTheWholePlan) {
  PlannerOptions options;  // the shipped defaults in replan mode: 47 calls of 8 candidates
  options.mode = PlanMode::kReplan;
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(11);
  auto probe = MakePlanner(options);
  probe->Reset(observation);
  const double plan_ms = probe->last_step().latency_ms;  // a whole plan
  const int calls = probe->last_step().calls;
  auto async =
      std::make_unique<AsyncPlanner>(MakePlanner(options), Wait(std::chrono::microseconds(0)));
  async->Reset(observation);
  observation = env->Step(async->Step(observation)).observation;
  async->Step(observation);  // queued: the planning thread starts a plan
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int>(plan_ms * 200)));
  const auto start = std::chrono::steady_clock::now();
  async.reset();
  const double stop_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ::testing::Test::RecordProperty("stop_us", static_cast<int>(stop_ms * 1e3));
  ::testing::Test::RecordProperty("plan_us", static_cast<int>(plan_ms * 1e3));
  // A fifth of the plan had run, so waiting for the rest would take about
  // 0.8 plan_ms; one call takes plan_ms / calls (about 0.02 plan_ms).
  EXPECT_LT(stop_ms, 0.5 * plan_ms)
      << "a whole plan of " << calls << " calls takes " << plan_ms << " ms";
}

}  // namespace
}  // namespace dfmpc::planner
