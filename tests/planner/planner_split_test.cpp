// The control step in three parts (Observe, Optimize, Action), the first
// plan made at Reset, and catching up with missed control steps (deadlines
// and falling far behind: planner_deadline_test.cpp).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "plan_schedule.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

TEST(PlannerSplitTest, ObserveOptimizeActionEqualsActBitForBit) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.candidates = 3;
  options.eta = 0.3;  // every step draws noise: the generators must stay in step
  options.calls_per_step = 2;
  auto by_act = MakePlanner(options), by_parts = MakePlanner(options);
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(5);
  by_act->Reset(observation);
  by_parts->Reset(observation);
  // The first action is Reset's plan, read without a model call.
  Eigen::VectorXd action = by_act->Act(observation);
  ASSERT_EQ(action, by_parts->Action());
  for (int s = 1; s < 12; ++s) {
    observation = env->Step(action).observation;
    action = by_act->Act(observation);
    by_parts->Observe(observation);
    ASSERT_TRUE(by_parts->Optimize());
    ASSERT_EQ(by_parts->Action(), action) << "step " << s;
    ASSERT_EQ(by_parts->plan().tokens, by_act->plan().tokens) << "step " << s;
    EXPECT_EQ(by_parts->plan().step, s);
  }
  EXPECT_FALSE(by_parts->Optimize());  // nothing queued
  EXPECT_EQ(by_parts->steps(), by_act->steps());
}

TEST(PlannerSplitTest, ResetMakesTheFirstPlanSoTheFirstActRunsNoModel) {
  const PlannerOptions options = Small(PlanMode::kWarm);  // K = 4
  auto planner = MakePlanner(options);
  const Eigen::Vector3d observation(-0.9, 0.43589, 1.5);
  planner->Reset(observation);
  // From noise to the resting levels: K calls, the real token riding along.
  EXPECT_EQ(planner->last_step().calls, options.levels);
  EXPECT_EQ(planner->context_cache().persistent_size(), 1);
  EXPECT_EQ(planner->plan().step, 0);
  EXPECT_EQ(planner->steps(), 0);
  const StepStats reset_step = planner->last_step();
  const Eigen::VectorXd action = planner->Act(observation);
  EXPECT_EQ(planner->context_cache().persistent_size(), 1);           // nothing appended
  EXPECT_EQ(planner->last_step().latency_ms, reset_step.latency_ms);  // no new optimization
  EXPECT_EQ(action, planner->Action());
  EXPECT_EQ(planner->steps(), 1);
}

TEST(PlannerSplitTest, ActionBetweenPlansReadsThePlanAtTheElapsedSteps) {
  auto planner = MakePlanner(Small(PlanMode::kWarm));
  const std::vector<Eigen::VectorXd> observations = {
      Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0.99, 0.14, 0.5), Eigen::Vector3d(0.96, 0.28, 1)};
  planner->Reset(observations[0]);
  const Plan plan = planner->plan();
  planner->Observe(observations[1]);
  EXPECT_EQ(planner->Action(), plan.actions.row(1).transpose().cwiseMax(-1.0).cwiseMin(1.0));
  planner->Observe(observations[2]);
  EXPECT_EQ(planner->Action(), plan.actions.row(2).transpose().cwiseMax(-1.0).cwiseMin(1.0));
  EXPECT_EQ(planner->plan().step, 0);  // still the old plan
}

TEST(PlannerSplitTest, OneWarmStepCatchesUpWithEveryMissedStepAndTheSameHistory) {
  const PlannerOptions options = Small(PlanMode::kWarm);  // H = 16, K = 4, r = 1
  auto twin = MakePlanner(options);                       // never falls behind
  const int capacity = twin->options().context_length - 1;
  const int before = capacity + 5;  // the ring is full and evicting
  const int missed = 3;
  const Trajectory trajectory = Drive(*twin, before + missed, 1);

  auto planner = MakePlanner(options);  // same seed: same actions up to `before`
  planner->Reset(trajectory.observations[0]);
  for (int s = 0; s < before; ++s) {
    ASSERT_EQ(planner->Act(trajectory.observations[s]), trajectory.actions[s]) << "step " << s;
  }
  for (int s = before; s < before + missed; ++s) {
    planner->Observe(trajectory.observations[s], trajectory.actions[s - 1]);
    EXPECT_TRUE(planner->Action().allFinite());  // the plan shifted by the elapsed steps
  }
  ASSERT_TRUE(planner->Optimize());
  const StepStats& stats = planner->last_step();
  EXPECT_EQ(stats.steps_caught_up, missed);
  EXPECT_EQ(stats.calls, options.calls_per_step);
  EXPECT_FALSE(stats.fallback);
  EXPECT_EQ(planner->plan().step, before + missed - 1);
  EXPECT_EQ(planner->plan().levels, RestingLevels(4, 16, 0.25));
  // The history holds the real tokens the twin's does, encoded as the twin
  // encoded them (the older ones in single-token forwards, as each led a
  // call of its own there): equal to a few float ulps, since the twin's
  // forwards carried plan tokens beside the real one.
  const worldmodel::KvCache& got = planner->context_cache();
  const worldmodel::KvCache& want = twin->context_cache();
  ASSERT_EQ(got.KeptPositions(), want.KeptPositions());
  for (int layer = 0; layer < Pendulum().info.config.depth; ++layer) {
    const auto a = got.Segments(layer, 1), b = want.Segments(layer, 1);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_LT((a[i].keys - b[i].keys).abs().max().item<double>(), 1e-4) << "layer " << layer;
      EXPECT_LT((a[i].values - b[i].values).abs().max().item<double>(), 1e-4) << "layer " << layer;
    }
  }
}

TEST(PlannerSplitTest, BadObservationsAndActionsChangeNothing) {
  auto planner = MakePlanner(Small(PlanMode::kWarm));
  const Eigen::Vector3d good(1.0, 0.0, 0.0);
  EXPECT_THROW(planner->Observe(good), std::invalid_argument);  // before Reset
  EXPECT_THROW(planner->Action(), std::invalid_argument);
  EXPECT_THROW(planner->Optimize(), std::invalid_argument);
  planner->Reset(good);
  EXPECT_THROW(planner->Observe(good, Eigen::VectorXd::Zero(2)), std::invalid_argument);
  EXPECT_THROW(planner->Observe(good, Eigen::VectorXd::Constant(1, std::nan(""))),
               std::invalid_argument);
  EXPECT_THROW(planner->Observe(Eigen::Vector2d(1, 0)), std::invalid_argument);
  EXPECT_THROW(planner->CheckObservation(Eigen::Vector3d(1, 0, std::nan(""))),
               std::invalid_argument);
  EXPECT_EQ(planner->steps(), 0);
  EXPECT_FALSE(planner->Optimize());
}

TEST(PlannerSplitTest, WarmModeNeedsAPlanPastTheExecutedToken) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.horizon = 1;
  options.uncertainty = 4.0;
  EXPECT_THROW(MakePlanner(options), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::planner
