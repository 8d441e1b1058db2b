// What a controller relies on: Act never returns a non-finite action, an
// exception leaves the planner as it was, and the planner changes nothing
// outside its own objects.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "sabotaged_cost.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

void ExpectUsableAction(const Eigen::VectorXd& action) {
  ASSERT_EQ(action.size(), 1);
  EXPECT_TRUE(action.allFinite()) << action.transpose();
  EXPECT_LE(action.cwiseAbs().maxCoeff(), 1.0);
}

// The pendulum's observations [cos, sin, velocity] along a short episode.
std::vector<Eigen::VectorXd> Observations(int steps, std::uint64_t seed) {
  auto env = envs::MakeEnv(kPendulum);
  std::vector<Eigen::VectorXd> observations = {env->Reset(seed)};
  for (int s = 1; s < steps; ++s) {
    observations.push_back(env->Step(Eigen::VectorXd::Constant(1, 0.3)).observation);
  }
  return observations;
}

TEST(PlannerSafetyTest, AWildObservationIsRefusedAndPoisonsNothing) {
  // The reported case: after this observation the planner returned NaN for
  // ever. Its sine lies 1e300 / scale standard deviations out.
  PlannerOptions options;  // the demo's defaults
  auto planner = MakePlanner(options);
  const std::vector<Eigen::VectorXd> observations = Observations(4, 2);
  planner->Reset(observations[0]);
  ExpectUsableAction(planner->Act(observations[0]));
  try {
    planner->Act(Eigen::Vector3d(1e-30, 1e300, -1428));
    FAIL() << "a 1e300 sine was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("observation feature 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(planner->steps(), 1);
  for (size_t s = 1; s < observations.size(); ++s) {
    ExpectUsableAction(planner->Act(observations[s]));
    EXPECT_FALSE(planner->last_step().fallback);
  }
}

TEST(PlannerSafetyTest, FuzzedObservationsGiveAFiniteActionOrInvalidArgument) {
  auto planner = MakePlanner(Small(PlanMode::kWarm));
  const std::vector<Eigen::VectorXd> sane = Observations(2, 0);
  planner->Reset(sane[0]);
  planner->Act(sane[0]);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> kind(0, 5), exponent(-320, 308);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  auto draw = [&]() -> double {
    switch (kind(rng)) {
      case 0:
        return unit(rng) * std::pow(10.0, exponent(rng));  // any magnitude
      case 1:
        return unit(rng) * std::numeric_limits<double>::denorm_min() * 1e3;
      case 2:
        return unit(rng) * 1e4;  // near the accepted edge for some features
      case 3:
        return unit(rng) * std::numeric_limits<double>::max();
      case 4:
        return 0.0;
      default:
        return unit(rng) * 3.0;  // plausible
    }
  };
  int accepted = 0, refused = 0;
  for (int i = 0; i < 10000; ++i) {
    const Eigen::Vector3d observation(draw(), draw(), draw());
    try {
      const Eigen::VectorXd action = planner->Act(observation);
      ASSERT_TRUE(action.allFinite()) << "observation " << observation.transpose();
      ASSERT_LE(action.cwiseAbs().maxCoeff(), 1.0);
      ++accepted;
    } catch (const std::invalid_argument&) {
      ++refused;
    }
  }
  std::cout << accepted << " fuzzed observations planned on, " << refused << " refused\n";
  // Both paths were exercised, and the planner still controls afterwards.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
  for (const Eigen::VectorXd& observation : Observations(3, 1)) {
    ExpectUsableAction(planner->Act(observation));
  }
}

TEST(PlannerSafetyTest, NonFinitePlansFallBackAndRecover) {
  Sabotage sabotage;
  PlannerOptions options = Small(PlanMode::kWarm);
  Planner planner(Pendulum(), std::make_unique<SabotagedCost>(sabotage), options);
  const std::vector<Eigen::VectorXd> observations = Observations(6, 4);
  planner.Reset(observations[0]);
  planner.Act(observations[0]);
  planner.Act(observations[1]);
  const Eigen::VectorXd planned_next = planner.plan().actions.row(1).transpose();
  ASSERT_TRUE(planned_next.allFinite());

  sabotage.nan_now = true;  // every candidate's cost is NaN
  const Eigen::VectorXd fallback = planner.Act(observations[2]);
  EXPECT_TRUE(planner.last_step().fallback);
  EXPECT_EQ(fallback, planned_next.cwiseMax(-1.0).cwiseMin(1.0));
  EXPECT_EQ(planner.plan().actions.rows(), 0);              // the plan was dropped
  EXPECT_EQ(planner.context_cache().persistent_size(), 0);  // and the history

  // Still failing, now without a plan: zero.
  EXPECT_EQ(planner.Act(observations[3]), Eigen::VectorXd::Zero(1));
  EXPECT_TRUE(planner.last_step().fallback);

  sabotage.nan_now = false;
  ExpectUsableAction(planner.Act(observations[4]));
  EXPECT_FALSE(planner.last_step().fallback);
  EXPECT_EQ(planner.context_cache().persistent_size(),
            1);  // the history restarted
  ExpectUsableAction(planner.Act(observations[5]));
  EXPECT_EQ(planner.plan().actions.rows(), options.horizon);
}

// Two planners fed the same observations, one of which first sees a step
// that throws: afterwards both must act identically, bit for bit.
void ExpectThrowLeavesPlannerUnchanged(const PlannerOptions& options) {
  Sabotage sabotage, never;
  Planner victim(Pendulum(), std::make_unique<SabotagedCost>(sabotage), options);
  Planner twin(Pendulum(), std::make_unique<SabotagedCost>(never), options);
  const std::vector<Eigen::VectorXd> observations = Observations(8, 6);
  victim.Reset(observations[0]);
  twin.Reset(observations[0]);
  for (size_t s = 0; s < observations.size(); ++s) {
    if (s == 3 || s == 5) {
      sabotage.throw_now = true;
      EXPECT_THROW(victim.Act(observations[s]), std::runtime_error);
      sabotage.throw_now = false;
      EXPECT_EQ(victim.steps(), twin.steps());
      EXPECT_EQ(victim.context_cache().KeptPositions(), twin.context_cache().KeptPositions());
      EXPECT_EQ(victim.context_cache().scratch_size(), 0);
    }
    EXPECT_EQ(victim.Act(observations[s]), twin.Act(observations[s])) << "step " << s;
    EXPECT_EQ(victim.plan().tokens, twin.plan().tokens) << "step " << s;
  }
}

TEST(PlannerSafetyTest, AThrowInsideActLeavesThePlannerAsItWas) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.context_length = 5;  // the throwing steps evict from the ring
  options.candidates = 3;
  options.eta = 0.5;  // steps draw noise: the generator must be restored too
  ExpectThrowLeavesPlannerUnchanged(options);
  options.guidance_scale = 0.05;  // the cost now throws inside the first call
  ExpectThrowLeavesPlannerUnchanged(options);
}

// The reported case: a controller that read its robot once for Reset and
// again for the first Act died on a difference of 1e-6.
TEST(PlannerSafetyTest, AFirstActWithANewObservationIsAStepOfItsOwn) {
  const PlannerOptions options = Small(PlanMode::kWarm);
  auto planner = MakePlanner(options), twin = MakePlanner(options);
  const std::vector<Eigen::VectorXd> observations = Observations(2, 3);
  Eigen::VectorXd read_again = observations[0];
  read_again[2] += 1e-6;
  planner->Reset(observations[0]);
  twin->Reset(observations[0]);
  const Eigen::VectorXd action = planner->Act(read_again);
  ExpectUsableAction(action);
  EXPECT_EQ(planner->steps(), 2);  // Reset's step 0 and this one
  EXPECT_EQ(planner->plan().step, 1);
  // Nothing was applied while Reset planned: the zero action led to it.
  twin->Observe(read_again, Eigen::VectorXd::Zero(1));
  ASSERT_TRUE(twin->Optimize());
  EXPECT_EQ(action, twin->Action());
  EXPECT_EQ(planner->plan().tokens, twin->plan().tokens);
  ExpectUsableAction(planner->Act(observations[1]));
}

// The reported case: the history restart cleared the cache before the
// rollback guard was set, so a throw there dropped 11 tokens.
TEST(PlannerSafetyTest, AThrowWhileRestartingTheHistoryKeepsTheHistory) {
  Sabotage sabotage;
  PlannerOptions options = Small(PlanMode::kWarm);
  options.context_length = 5;
  Planner planner(Pendulum(), std::make_unique<SabotagedCost>(sabotage), options);
  const std::vector<Eigen::VectorXd> observations = Observations(12, 7);
  planner.Reset(observations[0]);
  for (int s = 0; s < 4; ++s) planner.Act(observations[s]);
  const worldmodel::KvCache& cache = planner.context_cache();
  const std::vector<int64_t> history = cache.KeptPositions();
  const at::Tensor keys = cache.Segments(0, 1)[0].keys.clone();
  for (int s = 4; s < 12; ++s) {  // more than the context: the history must restart
    planner.Observe(observations[s], Eigen::VectorXd::Zero(1));
  }
  sabotage.throw_now = true;
  EXPECT_THROW(planner.Optimize(), std::runtime_error);
  EXPECT_EQ(cache.KeptPositions(), history);
  EXPECT_TRUE(torch::equal(cache.Segments(0, 1)[0].keys, keys));
  sabotage.throw_now = false;
  ASSERT_TRUE(planner.Optimize());
  EXPECT_EQ(cache.NextPosition(), options.context_length);  // restarted from the newest 5
}

TEST(PlannerSafetyTest, ChangesNothingOutsideItself) {
  worldmodel::Checkpoint shared = Pendulum();  // shares the weights
  for (const at::Tensor& p : shared.model->parameters()) ASSERT_TRUE(p.requires_grad());
  at::set_num_threads(2);
  torch::manual_seed(11);
  const at::Tensor expected_draw = torch::rand({4});
  torch::manual_seed(11);

  PlannerOptions options = Small(PlanMode::kWarm);
  options.guidance_scale = 0.05;  // runs autograd through the shared model
  options.threads = 1;
  Planner planner(shared, MakeTaskCost(kPendulum), options);
  Drive(planner, 3, 0);

  for (const at::Tensor& p : shared.model->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_FALSE(p.grad().defined());
  }
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_TRUE(torch::equal(torch::rand({4}), expected_draw))
      << "the planner drew from the global generator";
}

// A thread's LibTorch thread count as it starts: what it takes from the
// process-wide default on its first parallel call.
int FreshThreadsThreadCount() {
  int count = 0;
  std::thread([&] { count = at::get_num_threads(); }).join();
  return count;
}

TEST(PlannerSafetyTest, ItsThreadOptionIsItsCallingThreadsAlone) {
  const int outside = FreshThreadsThreadCount();
  const int caller = at::get_num_threads();
  PlannerOptions options = Small(PlanMode::kWarm);
  options.threads = std::max(outside, caller) + 1;  // differs from both
  Planner planner(Pendulum(), MakeTaskCost(kPendulum), options);
  int during = 0, fresh_during = 0;
  planner.SetAbortCallback([&] {  // called between the model calls of a step
    during = at::get_num_threads();
    fresh_during = FreshThreadsThreadCount();
    return false;
  });
  Drive(planner, 2, 0);
  EXPECT_EQ(during, options.threads) << "the planner's calls run with its own count";
  EXPECT_EQ(fresh_during, outside) << "a thread started meanwhile took the planner's count";
  EXPECT_EQ(at::get_num_threads(), caller);
  EXPECT_EQ(FreshThreadsThreadCount(), outside);
}

}  // namespace
}  // namespace dfmpc::planner
