// Optimize's deadline contract (planner.h): work starts only where its
// predicted end is before the deadline; a step with no time for its first
// call is deferred, one with time for some calls ends with a jump; the abort
// callback stops a step between model calls and between a call's blocks,
// and a deadline that passes inside a call stops the call there; falling
// behind keeps the history.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "deadline_search.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "plan_schedule.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

using Clock = std::chrono::steady_clock;

// The pendulum's observations under zero torque from `seed`'s start.
std::vector<Eigen::VectorXd> Observations(int steps, std::uint64_t seed) {
  auto env = envs::MakeEnv(kPendulum);
  std::vector<Eigen::VectorXd> observations = {env->Reset(seed)};
  for (int s = 1; s < steps; ++s) {
    observations.push_back(env->Step(Eigen::VectorXd::Zero(1)).observation);
  }
  return observations;
}

TEST(PlannerDeadlineTest, ADeadlineThatNeverComesChangesNothing) {
  PlannerOptions options = Small(PlanMode::kReplan);
  options.horizon = 4;
  auto timed = MakePlanner(options), untimed = MakePlanner(options);
  const std::vector<Eigen::VectorXd> o = Observations(2, 1);
  for (Planner* planner : {timed.get(), untimed.get()}) {
    planner->Reset(o[0]);
    planner->Observe(o[1]);
  }
  ASSERT_TRUE(timed->Optimize(Clock::now() + std::chrono::hours(1)));
  ASSERT_TRUE(untimed->Optimize());
  EXPECT_EQ(timed->Action(), untimed->Action());
  EXPECT_EQ(timed->plan().tokens, untimed->plan().tokens);
  EXPECT_FALSE(timed->last_step().cut_short);
  EXPECT_EQ(timed->last_step().calls, options.levels + options.horizon - 1);
}

// The reported case: with a deadline already passed, five catch-up
// forwards and two calls used to run anyway.
TEST(PlannerDeadlineTest, APassedDeadlineDefersTheStepAndTouchesNothing) {
  const PlannerOptions options = Small(PlanMode::kWarm);
  auto late = MakePlanner(options), twin = MakePlanner(options);
  const std::vector<Eigen::VectorXd> o = Observations(7, 2);
  for (Planner* planner : {late.get(), twin.get()}) {
    planner->Reset(o[0]);
    for (int s = 1; s < 7; ++s) planner->Observe(o[s], Eigen::VectorXd::Zero(1));
  }
  const Plan before = late->plan();
  const std::vector<int64_t> history = late->context_cache().KeptPositions();
  EXPECT_FALSE(late->Optimize(Clock::now()));
  const StepStats& stats = late->last_step();
  EXPECT_TRUE(stats.deferred);
  EXPECT_EQ(stats.calls, 0);
  EXPECT_EQ(stats.token_forwards, 0);
  EXPECT_GT(stats.needed_ms, 0.0);
  EXPECT_EQ(late->plan().step, before.step);
  EXPECT_EQ(late->plan().tokens, before.tokens);
  EXPECT_EQ(late->context_cache().KeptPositions(), history);
  // Read on by the elapsed steps, as between plans.
  EXPECT_EQ(late->Action(), before.actions.row(6).transpose().cwiseMax(-1.0).cwiseMin(1.0));
  // Nothing was lost: the next step equals one that was never deferred.
  ASSERT_TRUE(late->Optimize());
  ASSERT_TRUE(twin->Optimize());
  EXPECT_EQ(late->last_step().steps_caught_up, 6);
  EXPECT_EQ(late->Action(), twin->Action());
  EXPECT_EQ(late->plan().tokens, twin->plan().tokens);
}

// Deadlines between none and past a whole replan step's time: each step
// ends either deferred, complete, or cut short by a jump that leaves a
// complete plan, and a cut-short one is found among them.
TEST(PlannerDeadlineTest, TightDeadlinesCutTheProgramShortWithAJumpToACompletePlan) {
  PlannerOptions options = Small(PlanMode::kReplan);  // K + H - 1 = 19 calls a step
  const std::vector<Eigen::VectorXd> o = Observations(2, 3);
  auto full = MakePlanner(options);
  full->Reset(o[0]);
  full->Observe(o[1]);
  full->Optimize();
  const int full_calls = full->last_step().calls;
  const auto step = [&](double deadline_ms) {
    auto planner = MakePlanner(options);
    planner->Reset(o[0]);
    planner->Observe(o[1]);
    const auto deadline = std::chrono::duration<double, std::milli>(deadline_ms);
    const bool planned =
        planner->Optimize(Clock::now() + std::chrono::duration_cast<Clock::duration>(deadline));
    const StepStats& stats = planner->last_step();
    EXPECT_EQ(planned, !stats.deferred);
    if (stats.stopped) return DeadlineOutcome::kStopped;
    if (!planned) return DeadlineOutcome::kTooShort;
    if (!stats.cut_short) return DeadlineOutcome::kLongEnough;
    EXPECT_GE(stats.calls, 1);
    EXPECT_LT(stats.calls, full_calls);
    EXPECT_EQ(planner->plan().levels, std::vector<int>(options.horizon, 0));
    EXPECT_TRUE(planner->plan().tokens.allFinite());
    const Eigen::VectorXd action = planner->Action();
    EXPECT_TRUE(action.allFinite());
    EXPECT_LE(action.cwiseAbs().maxCoeff(), 1.0);
    EXPECT_EQ(planner->context_cache().persistent_size(), 2);  // the history is whole
    return DeadlineOutcome::kSought;
  };
  std::string trace;
  const int cut_steps = SearchDeadlines(2.0 * full->last_step().latency_ms, 80, 3, step, &trace);
  EXPECT_GT(cut_steps, 0)
      << "no deadline between one call and a whole step cut it short; deadlines tried:\n"
      << trace;
}

// The abort callback's invocations in one untimed step of a planner that
// `ready` brought to the step.
int AbortChecksOfAStep(const PlannerOptions& options, const std::function<void(Planner&)>& ready) {
  auto probe = MakePlanner(options);
  ready(*probe);
  int checks = 0;
  probe->SetAbortCallback([&checks] { return ++checks < 0; });
  probe->Optimize();
  return checks;
}

// A preempted thread, played by an abort callback that sleeps until past
// `deadline` at its `sleep_at`-th check and never asks to abort.
void SleepPastDeadlineAtCheck(Planner& planner, int sleep_at, Clock::time_point deadline) {
  auto asked = std::make_shared<int>(0);
  planner.SetAbortCallback([asked, sleep_at, deadline] {
    if (++*asked == sleep_at)
      std::this_thread::sleep_until(deadline + std::chrono::milliseconds(1));
    return false;
  });
}

// A warm step with three observations queued (two catch-up forwards before
// the plan call), and a deadline far beyond its time, so that every call
// fits until a sleep.
struct QueuedWarmStep {
  static constexpr int kQueued = 3;
  QueuedWarmStep() = default;
  QueuedWarmStep(const QueuedWarmStep&) = delete;  // `ready` reads this one's observations
  PlannerOptions options = Small(PlanMode::kWarm);
  std::vector<Eigen::VectorXd> o = Observations(2 + kQueued, 5);
  std::function<void(Planner&)> ready = [this](Planner& planner) {
    planner.Reset(o[0]);
    planner.Act(o[1]);  // a plan to keep: the step is warm
    for (int s = 2; s < 2 + kQueued; ++s) planner.Observe(o[s]);
  };
  // An untimed twin that took the step.
  std::unique_ptr<Planner> Twin() const {
    auto twin = MakePlanner(options);
    ready(*twin);
    EXPECT_TRUE(twin->Optimize());
    return twin;
  }
  Clock::duration Budget(const Planner& twin) const {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(20.0 + 5.0 * twin.last_step().latency_ms));
  }
};

TEST(PlannerDeadlineTest, TheAbortCallbackStopsBetweenBlocksAndChangesNothing) {
  PlannerOptions options = Small(PlanMode::kReplan);
  auto planner = MakePlanner(options), twin = MakePlanner(options);
  const std::vector<Eigen::VectorXd> o = Observations(3, 4);
  int asked = 0;
  planner->SetAbortCallback([&asked] { return ++asked > 3; });
  EXPECT_THROW(planner->Reset(o[0]), PlannerAborted);      // Reset's K calls
  EXPECT_THROW(planner->Action(), std::invalid_argument);  // not reset
  asked = -1000;
  planner->Reset(o[0]);
  twin->Reset(o[0]);
  planner->Observe(o[1]);
  twin->Observe(o[1]);
  const int checks = AbortChecksOfAStep(options, [&](Planner& probe) {
    probe.Reset(o[0]);
    probe.Observe(o[1]);
  });
  // Asked before the step, before each call and between each call's blocks.
  ASSERT_GT(checks, options.levels + options.horizon);
  const std::vector<int64_t> history = planner->context_cache().KeptPositions();
  for (int stop_at = 1; stop_at <= checks; ++stop_at) {
    asked = 0;
    planner->SetAbortCallback([&asked, stop_at] { return ++asked == stop_at; });
    EXPECT_THROW(planner->Optimize(), PlannerAborted) << "stopped at check " << stop_at;
    EXPECT_EQ(asked, stop_at);
    EXPECT_EQ(planner->context_cache().KeptPositions(), history);
    EXPECT_EQ(planner->plan().step, 0);
  }
  // After every one of those aborts, the step is the one never aborted.
  planner->SetAbortCallback({});
  ASSERT_TRUE(planner->Optimize());
  ASSERT_TRUE(twin->Optimize());
  EXPECT_EQ(planner->plan().tokens, twin->plan().tokens);
  EXPECT_EQ(planner->Action(), twin->Action());
}

// A preempted thread, played by an abort callback that sleeps past the
// deadline at one of its checks: where that check is between two blocks
// of a model call, the call stops there, the step is deferred and its
// model work undone (catch-up forwards that ended stay in the history),
// and the next step equals one that never met a deadline. Every check of
// a step with two catch-up forwards is tried.
TEST(PlannerDeadlineTest, ADeadlinePassingInsideAModelCallStopsItBetweenBlocks) {
  const QueuedWarmStep warm;
  const auto twin = warm.Twin();
  const Clock::duration budget = warm.Budget(*twin);
  const int checks = AbortChecksOfAStep(warm.options, warm.ready);
  int stopped_catching_up = 0, stopped_planning = 0;
  for (int sleep_at = 1; sleep_at <= checks; ++sleep_at) {
    auto planner = MakePlanner(warm.options);
    warm.ready(*planner);
    const Plan before = planner->plan();
    const size_t history = planner->context_cache().KeptPositions().size();
    const Clock::time_point deadline = Clock::now() + budget;
    SleepPastDeadlineAtCheck(*planner, sleep_at, deadline);
    const bool planned = planner->Optimize(deadline);
    const StepStats& stats = planner->last_step();
    if (!stats.stopped) continue;  // the sleep was between calls: the deadline was seen there
    EXPECT_FALSE(planned);
    EXPECT_TRUE(stats.deferred);
    EXPECT_EQ(stats.calls, 0);
    EXPECT_EQ(planner->plan().step, before.step);
    EXPECT_EQ(planner->plan().tokens, before.tokens);
    EXPECT_EQ(planner->context_cache().KeptPositions().size(), history + stats.token_forwards);
    if (stats.token_forwards + 1 < QueuedWarmStep::kQueued) {
      ++stopped_catching_up;
    } else {
      ++stopped_planning;
    }
    planner->SetAbortCallback({});
    ASSERT_TRUE(planner->Optimize());
    EXPECT_EQ(planner->plan().tokens, twin->plan().tokens) << "stopped at check " << sleep_at;
    EXPECT_EQ(planner->Action(), twin->Action());
  }
  EXPECT_GT(stopped_catching_up, 0) << "no stop inside a catch-up forward";
  EXPECT_GT(stopped_planning, 0) << "no stop inside a plan call";
}

// As above with a start-only deadline: a call the deadline passes inside
// runs to its end. No step stops; a sleep inside the plan call ends the
// step late with the plan an untimed step makes, and a sleep before a call
// defers the step, which then equals the untimed one too.
TEST(PlannerDeadlineTest, AStartOnlyDeadlineLetsAStartedCallEnd) {
  const QueuedWarmStep warm;
  const auto twin = warm.Twin();
  const Clock::duration budget = warm.Budget(*twin);
  const int checks = AbortChecksOfAStep(warm.options, warm.ready);
  int planned_late = 0;
  for (int sleep_at = 1; sleep_at <= checks; ++sleep_at) {
    auto planner = MakePlanner(warm.options);
    warm.ready(*planner);
    const Clock::time_point deadline = Clock::now() + budget;
    SleepPastDeadlineAtCheck(*planner, sleep_at, deadline);
    const bool planned = planner->Optimize(deadline, DeadlineKind::kStartOnly);
    EXPECT_FALSE(planner->last_step().stopped) << "stopped at check " << sleep_at;
    if (planned) {
      ++planned_late;
    } else {
      planner->SetAbortCallback({});
      ASSERT_TRUE(planner->Optimize());
    }
    EXPECT_EQ(planner->plan().tokens, twin->plan().tokens) << "slept at check " << sleep_at;
    EXPECT_EQ(planner->Action(), twin->Action());
  }
  EXPECT_GT(planned_late, 0) << "no sleep inside the plan call let it end";
}

// The reported case: 16 observations queued, the plan moved 16 steps and
// the stats said 1.
TEST(PlannerDeadlineTest, FallingAWholePlanBehindKeepsTheHistoryAndPlansFromNoise) {
  const PlannerOptions options = Small(PlanMode::kWarm);  // H = 16, K = 4
  auto planner = MakePlanner(options);
  const int behind = options.horizon + 3;
  const std::vector<Eigen::VectorXd> o = Observations(behind + 1, 5);
  planner->Reset(o[0]);
  for (int s = 1; s <= behind; ++s) {
    planner->Observe(o[s], Eigen::VectorXd::Zero(1));
    if (s >= options.horizon) {
      EXPECT_EQ(planner->Action(), Eigen::VectorXd::Zero(1));  // past the plan
    }
  }
  ASSERT_TRUE(planner->Optimize());
  const StepStats& stats = planner->last_step();
  EXPECT_EQ(stats.steps_caught_up, behind);
  EXPECT_EQ(stats.calls, options.levels);  // a plan from noise
  EXPECT_EQ(planner->plan().step, behind);
  // Every step is in the history (up to the ring's capacity).
  const int capacity = planner->options().context_length - 1;
  EXPECT_EQ(planner->context_cache().persistent_size(), std::min(behind + 1, capacity));
  EXPECT_EQ(planner->context_cache().NextPosition(), behind + 1);
}

TEST(PlannerDeadlineTest, MoreStepsQueuedThanTheContextRestartTheHistoryFromTheNewest) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.context_length = 5;
  auto planner = MakePlanner(options);
  const std::vector<Eigen::VectorXd> o = Observations(9, 6);
  planner->Reset(o[0]);
  for (int s = 1; s <= 8; ++s) planner->Observe(o[s], Eigen::VectorXd::Zero(1));
  ASSERT_TRUE(planner->Optimize());
  // The 5 newest steps restart the history; the ring keeps 4 of them.
  EXPECT_EQ(planner->context_cache().NextPosition(), 5);
  EXPECT_EQ(planner->context_cache().persistent_size(), 4);
  EXPECT_EQ(planner->last_step().steps_caught_up, 8);
}

}  // namespace
}  // namespace dfmpc::planner
