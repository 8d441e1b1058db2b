// Each planner option does what it claims, on the shipped pendulum model.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "plan_schedule.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

TEST(PlannerModesTest, SameSeedSameActionsAndTheSeedMatters) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.candidates = 4;
  options.eta = 0.3;
  auto a = MakePlanner(options), b = MakePlanner(options);
  const Trajectory first = Drive(*a, 12, 5), second = Drive(*b, 12, 5);
  EXPECT_EQ(first.actions, second.actions);
  options.seed = 1;
  auto c = MakePlanner(options);
  EXPECT_NE(Drive(*c, 12, 5).actions, first.actions);
  // Reset starts the planner's generator over.
  EXPECT_EQ(Drive(*a, 12, 5).actions, first.actions);
}

// Summed cost of the plans chosen on the first step from a few initial
// states, with guidance `scale`. The replan pyramid denoises every token, so
// the cost covers the whole plan.
double FirstPlanCost(double scale) {
  double cost = 0.0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const Eigen::VectorXd observation = envs::MakeEnv(kPendulum)->Reset(seed);
    PlannerOptions options = Small(PlanMode::kReplan);
    options.guidance_scale = scale;
    auto planner = MakePlanner(options);
    planner->Reset(observation);
    planner->Act(observation);
    cost += planner->plan().cost;
  }
  return cost;
}

TEST(PlannerModesTest, GuidanceLowersTheChosenPlansCost) {
  // Same seed, so the same initial noise and the same states: only the
  // guidance term differs, and a stronger pull lowers the cost further.
  const double plain = FirstPlanCost(0.0), guided = FirstPlanCost(0.05),
               strong = FirstPlanCost(1.0);
  EXPECT_LT(guided, plain);
  EXPECT_LT(strong, guided);
}

TEST(PlannerModesTest, MppiWeighsCandidatesByCost) {
  PlannerOptions best = Small(PlanMode::kWarm);
  best.candidates = 8;
  best.eta = 0.5;  // candidates differ after the first step
  PlannerOptions sharp = best, flat = best;
  sharp.selection = flat.selection = Selection::kMppi;
  sharp.temperature = 1e-30;  // all weight on the cheapest candidate
  flat.temperature = 1e30;    // equal weights: the candidates' mean action
  auto planner_best = MakePlanner(best), planner_sharp = MakePlanner(sharp),
       planner_flat = MakePlanner(flat);
  const Trajectory trajectory = Drive(*planner_best, 1, 2);
  const Eigen::VectorXd observation = trajectory.observations[0];
  planner_sharp->Reset(observation);
  planner_flat->Reset(observation);
  const Eigen::VectorXd sharp_action = planner_sharp->Act(observation);
  const Eigen::VectorXd flat_action = planner_flat->Act(observation);
  EXPECT_EQ(sharp_action, trajectory.actions[0]);
  EXPECT_NE(flat_action, trajectory.actions[0]);
  EXPECT_TRUE(flat_action.allFinite());
  EXPECT_LE(flat_action.cwiseAbs().maxCoeff(), 1.0);
  // The kept plan is the cheapest candidate in every mode.
  EXPECT_EQ(planner_flat->plan().tokens, planner_best->plan().tokens);
}

TEST(PlannerModesTest, EtaAddsNoiseToEveryDenoisingStep) {
  PlannerOptions plain = Small(PlanMode::kWarm), noisy = plain;
  noisy.eta = 1.0;
  auto a = MakePlanner(plain), b = MakePlanner(noisy), c = MakePlanner(noisy);
  const Trajectory deterministic = Drive(*a, 6, 3), stochastic = Drive(*b, 6, 3);
  EXPECT_NE(deterministic.actions, stochastic.actions);
  EXPECT_EQ(Drive(*c, 6, 3).actions,
            stochastic.actions);  // seeded, so repeatable
  for (const Eigen::VectorXd& action : stochastic.actions) {
    EXPECT_TRUE(action.allFinite());
    EXPECT_LE(action.cwiseAbs().maxCoeff(), 1.0);
  }
}

TEST(PlannerModesTest, SeveralCallsPerStepReturnToTheRestingLevels) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.calls_per_step = 3;
  options.renoise_levels = 0;
  auto planner = MakePlanner(options);
  Drive(*planner, 4, 1);
  EXPECT_EQ(planner->last_step().calls, 3);
  EXPECT_EQ(planner->plan().levels, RestingLevels(4, 16, 0.25));
  // Resting levels (K = 4, u = 1/4): 0, 1 x4, 2 x4, 3 x4, 4 x3. Shifted and
  // re-noised by r - 1 = 2 levels (capped at K), token t starts at
  // min(4, rest[t + 1] + 2) and drops one level per call, never below
  // rest[t]: tokens 13-15 stay at 4, tokens 9-12 move in call 0 only, 5-8 in
  // calls 0-1, token 4 in calls 0-2, 1-3 in calls 0-1 and token 0 in all
  // three, reaching level 0 only after the last. A call runs tokens 0 to its
  // last moving one: 13, 9 and 5 tokens, plus the real token in the first.
  EXPECT_EQ(planner->last_step().token_forwards, 1 + 13 + 9 + 5);
}

}  // namespace
}  // namespace dfmpc::planner
