// Closed-loop regression checks of the shipped models: the default planner
// (warm r = 1, tuned per task) drives each task for part of an episode from fixed seeds, and
// the return must stay far above what a broken planner or model scores. The
// floors sit well below the measured returns (noted per task) and well above
// the random policy's, so a real regression fails and noise does not.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

struct RegressionCase {
  std::string task;
  int control_steps;  // from the start of the episode
  std::vector<std::uint64_t> seeds;
  double floor;  // on the mean return over the seeds
  std::string model = "";  // the file's stem in examples/models; empty: the task's
  std::string Name() const { return model.empty() ? task : model; }
};

void PrintTo(const RegressionCase& c, std::ostream* os) { *os << c.Name(); }

class ShippedModelTest : public testing::TestWithParam<RegressionCase> {};

TEST_P(ShippedModelTest, ControlsItsTaskFromFixedSeeds) {
#if defined(__SANITIZE_ADDRESS__)
  // Numbers, not memory: the Release pass checks the returns. Under
  // AddressSanitizer these episodes took 170 s of the pass for the code
  // paths PlannerTest's and PlannerSafetyTest's shipped-model episodes
  // already run there (README: the sanitizer pass).
  GTEST_SKIP() << "closed-loop returns are checked in the Release build";
#endif
  const RegressionCase& c = GetParam();
  const worldmodel::Checkpoint model = worldmodel::LoadCheckpoint(ModelPath(c.Name()));
  PlannerOptions options = TunedPlannerOptions(c.task);
  if (model.info.sampling_levels > 0) options = AtLevels(options, model.info.sampling_levels);
  envs::EnvOptions env_options;
  env_options.action_repeat = model.info.action_repeat;
  auto env = envs::MakeEnv(c.task, env_options);
  ASSERT_LE(c.control_steps, env->episode_length());
  double total = 0.0;
  for (std::uint64_t seed : c.seeds) {
    Planner planner(model, MakeTaskCost(c.task), options);
    Eigen::VectorXd observation = env->Reset(seed);
    planner.Reset(observation);
    double episode_return = 0.0;
    for (int step = 0; step < c.control_steps; ++step) {
      const envs::StepResult result = env->Step(planner.Act(observation));
      episode_return += result.reward;
      observation = result.observation;
    }
    std::printf("%s seed %llu: return %.1f over %d control steps\n", c.Name().c_str(),
                static_cast<unsigned long long>(seed), episode_return, c.control_steps);
    total += episode_return;
  }
  EXPECT_GT(total / c.seeds.size(), c.floor) << c.Name();
}

INSTANTIATE_TEST_SUITE_P(
    Shipped, ShippedModelTest,
    testing::Values(
        // Whole episodes (`dfmpc eval --seed 0`, episodes 0-2), measured
        // with the task file's table (`dfmpc tune`'s: 16 levels, 6 of 8
        // candidates narrow, window 8, gain 2.12 above 0.22), surplus rate
        // 0.5: 770, 625, 736, mean 710 (the hand-tuned table at K = 8, gain
        // 2.2 above 0.3: 769, 666, 733; at K = 16 and surplus rate 0.25 765,
        // 694, 732; with a plain gain of 1.4 767, 694, 733; at gain 1 679,
        // 676, 633; without the window 653, 667, 607; the cheapest
        // candidate: 652, 665, 600);
        // per-episode std over 10 episodes 113; random 1.4; the plain warm
        // step of the first nominal model that failed, 28.
        RegressionCase{"pendulum_swingup", 1000, {0, 1, 2}, 250.0},
        // Whole 10 s episodes (250 steps of 4 physics steps) with the
        // shipped student (distilled to K = 4 levels) and the task file's
        // table (tuned without action gain or window): measured 838.9,
        // 836.3, 837.3: mean 837; random 59; its teacher at K = 16 665.
        RegressionCase{"cartpole_swingup", 250, {0, 1, 2}, 800.0},
        // The K = 16 model the shipped critic was chosen with, at K = 16
        // with the task file's table: measured 846.5, 847.4, 847.3: mean
        // 847 (sampled at the student's K = 4 631, 668, 680); the nominal model
        // with the untuned 4 re-noise levels 607.
        RegressionCase{"cartpole_swingup", 250, {0, 1, 2}, 700.0, "cartpole_swingup_k16"},
        // Whole 10 s episodes with the task file's table: measured 997.5,
        // 996.7, 995.7: mean 997; random 295; with the library's 4 re-noise
        // levels (K = 16) 815 over 10 episodes.
        RegressionCase{"cartpole_balance", 250, {0, 1, 2}, 700.0},
        // Whole 20 s episodes; measured 975, 998, 978: mean 984 (without
        // the action window 974, 998, 978; the cheapest candidate: 974,
        // 997, 978); per-episode std 20; random 52.
        RegressionCase{"reacher", 1000, {0, 1, 2}, 600.0},
        // Whole 20 s episodes (100 steps of 10 physics steps) with the task
        // file's table (tuned without action gain): measured 726, 732, 711,
        // all reaching the goal: mean 723 (the hand-tuned table with its
        // gain of 1.1 745, 749, 772); per-episode std 11; random 0; with the
        // straight-line cost and the hand-tuned table 0, 715, 0.
        RegressionCase{"pointmass_maze", 100, {0, 1, 2}, 500.0},
        // The pendulum without velocity, whole episodes at its tuned H = 16;
        // measured 634, 425, 555: mean 538 (582, 521, 401 before plans were
        // scored after the step just taken); per-episode std 181; mlp-mppi
        // 1.3 over 10 episodes; the untuned H = 32 130, 311, 0: mean 147.
        RegressionCase{"pendulum_swingup_novel", 1000, {0, 1, 2}, 300.0},
        // The cheetah (issue 54), the first 250 of 500 control steps with
        // the library's table: measured 73.5, 67.9, 58.5: mean 66.6 (whole
        // episodes: 101.8 ± 50.2 over 10); random 6.8 over whole episodes;
        // the same recipe's other two runs 75.7 and 52.5 over whole ones.
        RegressionCase{"cheetah_run", 250, {0, 1, 2}, 30.0},
        // The quadruped (issue 54), whole episodes of the three `eval --seed
        // 0` episodes (5, 6, 7) where it lands on its feet, with the
        // library's table: measured 599.7, 625.5, 630.3: mean 618.5; random
        // 501.1, 454.1, 520.5 (standing still earns half the reward); the
        // recipe's seed 11 run 610.8, 619.4, 615.3. On its back it never
        // rolls over (about 2).
        RegressionCase{"quadruped_walk", 1000, {5, 6, 7}, 560.0}),
    [](const testing::TestParamInfo<RegressionCase>& info) { return info.param.Name(); });

}  // namespace
}  // namespace dfmpc::planner
