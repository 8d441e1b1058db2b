// The block cache (PlannerOptions::front_tokens, refresh_every): what a
// step runs, that its exact settings are the exact planner, that a step
// after a refresh is exact, and how far it drifts from exact in between.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "deadline_search.h"
#include "dfmpc/planner/planner.h"
#include "plan_schedule.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

using Clock = std::chrono::steady_clock;

// H = 16, K = 4 (Small), several candidates so that scoring reads the far
// plan, deterministic DDIM so that both modes draw the same random numbers.
PlannerOptions Warm() {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.candidates = 4;
  return options;
}

PlannerOptions Block(int front, int refresh) {
  PlannerOptions options = Warm();
  options.front_tokens = front;
  options.refresh_every = refresh;
  return options;
}

// The actions `options` chooses, fed the observations of `observations`
// (every planner sees the same real states).
std::vector<Eigen::VectorXd> Replay(const PlannerOptions& options,
                                    const std::vector<Eigen::VectorXd>& observations) {
  auto planner = MakePlanner(options);
  planner->Reset(observations[0]);
  std::vector<Eigen::VectorXd> actions;
  for (const Eigen::VectorXd& observation : observations) {
    actions.push_back(planner->Act(observation));
  }
  return actions;
}

double MeanAbsDifference(const std::vector<Eigen::VectorXd>& a,
                         const std::vector<Eigen::VectorXd>& b) {
  double sum = 0.0;
  for (size_t s = 0; s < a.size(); ++s) sum += (a[s] - b[s]).cwiseAbs().mean();
  return sum / static_cast<double>(a.size());
}

TEST(BlockCacheTest, ItsExactSettingsAreTheExactPlanner) {
  auto exact = MakePlanner(Warm());
  const Trajectory reference = Drive(*exact, 10, 3);
  for (const PlannerOptions& options : {Block(4, 1), Block(16, 4), Block(0, 4)}) {
    auto planner = MakePlanner(options);
    EXPECT_EQ(Drive(*planner, 10, 3).actions, reference.actions);
  }
}

TEST(BlockCacheTest, FrontStepsRunTheFrontAndRefreshesRunThePlan) {
  auto exact = MakePlanner(Warm()), block = MakePlanner(Block(5, 3));
  Drive(*exact, 2, 0);
  const int64_t exact_forwards = exact->last_step().token_forwards;
  ASSERT_GT(exact_forwards, 1 + 5);
  const std::vector<int> rest = RestingLevels(4, 16, 0.25);
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(0);
  block->Reset(observation);
  for (int step = 1; step <= 7; ++step) {
    observation = env->Step(block->Act(observation)).observation;
    const std::vector<int>& levels = block->plan().levels;
    if (step == 1) continue;    // Reset's plan, read by the first Act
    if ((step - 1) % 3 == 0) {  // the third warm step since the last refresh
      EXPECT_EQ(block->last_step().token_forwards, exact_forwards) << "step " << step;
      EXPECT_EQ(levels, rest) << "step " << step;
      continue;
    }
    // The real token and the five front tokens; the front is back at rest,
    // the rest of the plan waited (noisier than at rest) for the refresh.
    EXPECT_EQ(block->last_step().token_forwards, 1 + 5) << "step " << step;
    EXPECT_EQ(std::vector<int>(levels.begin(), levels.begin() + 5),
              std::vector<int>(rest.begin(), rest.begin() + 5));
    bool waited = false;
    for (int t = 5; t < 16; ++t) {
      EXPECT_GE(levels[t], rest[t]);
      waited = waited || levels[t] > rest[t];
    }
    EXPECT_TRUE(waited) << "step " << step;
  }
}

TEST(BlockCacheTest, TheActionIsExactUntilATokenThatWaitedReachesIt) {
  // With one candidate the action is the first token's, and attention is
  // causal: it reads only tokens before it, all in the front. With a front
  // of 4 after a refresh, the tokens that waited during step 1 (plan
  // positions 4 on) reach the front at step 2 and the first position at
  // step 5, so steps 1-4 act as the exact planner does: the same inputs,
  // with only the window's length (matrix shapes) different. 1e-5 is the
  // cache-exactness tolerance (cached against uncached attention). From
  // step 5 the action inherits a token that waited a step before it was
  // re-noised (re-noising by 1 level keeps part of what it was).
  PlannerOptions exact = Warm(), block = Block(4, 8);
  exact.candidates = block.candidates = 1;
  exact.renoise_levels = block.renoise_levels = 1;
  auto reference = MakePlanner(exact);
  const Trajectory trajectory = Drive(*reference, 6, 2);
  const std::vector<Eigen::VectorXd> actions = Replay(block, trajectory.observations);
  EXPECT_EQ(actions[0], trajectory.actions[0]);  // Reset's plan
  for (int step = 1; step <= 4; ++step) {
    EXPECT_LT((actions[step] - trajectory.actions[step]).cwiseAbs().maxCoeff(), 1e-5) << step;
  }
  EXPECT_GT((actions[5] - trajectory.actions[5]).cwiseAbs().maxCoeff(), 1e-3);
}

TEST(BlockCacheTest, ItsActionsStayCloserToExactThanAnotherSeedsAre) {
  // Over the same real states, the block cache's actions differ from the
  // exact planner's by less than the exact planner's own spread over seeds:
  // its error is below the sampling noise the planner already lives with.
  // A mode that planned on stale or unrun tokens at the front would not be.
  auto driver = MakePlanner(Warm());
  const std::vector<Eigen::VectorXd> observations = Drive(*driver, 24, 1).observations;
  const std::vector<Eigen::VectorXd> exact = Replay(Warm(), observations);
  PlannerOptions other_seed = Warm();
  other_seed.seed = 7;
  const double seed_spread = MeanAbsDifference(Replay(other_seed, observations), exact);
  const double block_error = MeanAbsDifference(Replay(Block(6, 4), observations), exact);
  RecordProperty("seed_spread", std::to_string(seed_spread));
  RecordProperty("block_error", std::to_string(block_error));
  EXPECT_GT(seed_spread, 0.0);
  EXPECT_LT(block_error, seed_spread);
}

// Deadlines between none and past a refresh step's time, at a step whose
// refresh is due: each step is deferred, refreshes, or runs the front alone
// and says the refresh was postponed; that one is found among them, and the
// next step without a deadline refreshes.
TEST(BlockCacheTest, ARefreshThatWouldMissTheDeadlineWaits) {
  const PlannerOptions options = Block(5, 2);
  auto driver = MakePlanner(options);
  const std::vector<Eigen::VectorXd> o = Drive(*driver, 9, 4).observations;
  // Steps 1..7 alternate front and refresh steps (the clock learns both);
  // step 8's refresh is due.
  const auto warmed_up = [&]() {
    auto planner = MakePlanner(options);
    planner->Reset(o[0]);
    for (int s = 0; s < 8; ++s) planner->Act(o[s]);
    planner->Observe(o[8]);
    return planner;
  };
  auto untimed = warmed_up();
  ASSERT_TRUE(untimed->Optimize());
  const int64_t refresh_forwards = untimed->last_step().token_forwards;
  ASSERT_GT(refresh_forwards, 1 + 5);
  const auto step = [&](double deadline_ms) {
    auto planner = warmed_up();
    const auto deadline = std::chrono::duration<double, std::milli>(deadline_ms);
    const bool planned =
        planner->Optimize(Clock::now() + std::chrono::duration_cast<Clock::duration>(deadline));
    const StepStats& stats = planner->last_step();
    EXPECT_EQ(planned, !stats.deferred);
    if (stats.stopped) return DeadlineOutcome::kStopped;
    if (!planned) return DeadlineOutcome::kTooShort;
    if (!stats.refresh_postponed) {
      EXPECT_EQ(stats.token_forwards, refresh_forwards);
      return DeadlineOutcome::kLongEnough;
    }
    EXPECT_EQ(stats.token_forwards, 1 + 5);
    EXPECT_NE(planner->plan().levels, RestingLevels(4, 16, 0.25));  // the far plan waited
    // The refresh is due still, and runs in the next step with time for it.
    planner->Observe(o[8] + Eigen::VectorXd::Constant(o[8].size(), 0.01));
    EXPECT_TRUE(planner->Optimize());
    EXPECT_FALSE(planner->last_step().refresh_postponed);
    EXPECT_EQ(planner->last_step().token_forwards, refresh_forwards);
    return DeadlineOutcome::kSought;
  };
  std::string trace;
  const int postponed = SearchDeadlines(2.0 * untimed->last_step().latency_ms, 80, 3, step, &trace);
  EXPECT_GT(postponed, 0)
      << "no deadline between a front step and a refresh postponed it; deadlines tried:\n"
      << trace;
}

TEST(BlockCacheTest, RejectsImpossibleSettings) {
  PlannerOptions options = Warm();
  options.front_tokens = -1;
  EXPECT_THROW(options.Validate(), std::invalid_argument);
  options.front_tokens = 4;
  options.refresh_every = 0;
  EXPECT_THROW(options.Validate(), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::planner
