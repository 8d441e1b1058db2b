// Environments under perturbations: a nominal spec changes nothing, episodes
// are reproducible by seed, each parameter does what it says, and the state
// carries the perturbed future (what the oracle plans on).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/perturbation.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/envs/predictive_sampling.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {
namespace {

const char kEveryRange[] =
    "obs_noise=0:0.1,obs_noise_rel=0:0.05,delay=0:3,gain=0.5:1.5,mass=0.7:1.3,damping=0.5:2,"
    "friction=0.5:1.5";
// The physical parameters and the delay: what changes the simulated future.
const char kPhysicsRanges[] = "delay=1:3,gain=0.5:1.5,mass=0.7:1.3,damping=0.5:2,friction=0.5:1.5";

std::unique_ptr<Env> MakePerturbed(const std::string& task, const std::string& spec,
                                   int episode_physics_steps = kEpisodePhysicsSteps) {
  EnvOptions options;
  options.perturbation = ParsePerturbation(spec);
  options.episode_physics_steps = episode_physics_steps;
  return MakeEnv(task, options);
}

Eigen::VectorXd TestAction(int step, int size) {
  Eigen::VectorXd action(size);
  for (int i = 0; i < size; ++i) action[i] = std::sin(0.3 * step + i);
  return action;
}

// Observations and rewards of `steps` steps of TestAction.
struct Trajectory {
  std::vector<Eigen::VectorXd> observations;
  std::vector<double> rewards;
  bool operator==(const Trajectory& other) const {
    return observations == other.observations && rewards == other.rewards;
  }
  bool operator!=(const Trajectory& other) const { return !(*this == other); }
};

Trajectory Rollout(Env& env, int steps, int first_step = 0) {
  Trajectory trajectory;
  for (int t = first_step; t < first_step + steps; ++t) {
    const StepResult result = env.Step(TestAction(t, env.action_spec().size()));
    trajectory.observations.push_back(result.observation);
    trajectory.rewards.push_back(result.reward);
  }
  return trajectory;
}

class PerturbedTaskTest : public testing::TestWithParam<std::string> {};

TEST_P(PerturbedTaskTest, AZeroSpecEqualsNoSpecBitForBit) {
  auto plain = MakeEnv(GetParam());
  auto zero = MakePerturbed(GetParam(), "obs_noise=0,obs_noise_rel=0,delay=0,gain=1,mass=1:1");
  for (std::uint64_t seed : {0, 7}) {
    EXPECT_EQ(zero->Reset(seed), plain->Reset(seed));
    EXPECT_EQ(Rollout(*zero, 100), Rollout(*plain, 100));
    EXPECT_EQ(zero->state(), plain->state());
    EXPECT_EQ(zero->ShapedReward(), plain->ShapedReward());
    EXPECT_TRUE(zero->perturbation().IsNominal());
  }
}

TEST_P(PerturbedTaskTest, PerturbationsLeaveTheInitialStateAlone) {
  auto plain = MakeEnv(GetParam());
  auto perturbed = MakePerturbed(GetParam(), kPhysicsRanges);
  // The quadruped comes to rest on the floor before its clock starts: its
  // last 4 features, the toes' touch, read contact forces, which the
  // perturbed masses and servo strengths change at the same state, and its
  // torso's velocity, computed about the perturbed centre of mass, differs
  // by rounding (1e-20 at rest).
  const bool resting_on_contacts = GetParam() == "quadruped_walk";
  for (std::uint64_t seed : {1, 2, 3}) {
    const Eigen::VectorXd expected = plain->Reset(seed);
    const Eigen::VectorXd observed = perturbed->Reset(seed);
    EXPECT_EQ(perturbed->state().head(plain->state().size()), plain->state());
    if (!resting_on_contacts) {
      EXPECT_EQ(observed, expected);
      continue;
    }
    const int compared = static_cast<int>(expected.size()) - 4;
    EXPECT_LT((observed.head(compared) - expected.head(compared)).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST_P(PerturbedTaskTest, EpisodesAreReproducibleBySeed) {
  auto first = MakePerturbed(GetParam(), kEveryRange);
  auto second = MakePerturbed(GetParam(), kEveryRange);
  EXPECT_EQ(first->Reset(11), second->Reset(11));
  EXPECT_EQ(Rollout(*first, 50), Rollout(*second, 50));
  EXPECT_EQ(first->state(), second->state());
  const Perturbation eleven = first->perturbation();
  EXPECT_EQ(PerturbationValues(eleven), PerturbationValues(second->perturbation()));
  second->Reset(12);
  EXPECT_NE(PerturbationValues(second->perturbation()), PerturbationValues(eleven));
  first->Reset(11);
  EXPECT_EQ(PerturbationValues(first->perturbation()), PerturbationValues(eleven));
}

// Step(a_t) applies a_{t-d}, zeros for the first d steps: the same as an
// undelayed env fed the shifted actions.
TEST_P(PerturbedTaskTest, DelayShiftsTheActionsByExactlyDSteps) {
  constexpr int kDelay = 3;
  auto delayed = MakePerturbed(GetParam(), "delay=3");
  auto plain = MakeEnv(GetParam());
  delayed->Reset(4);
  plain->Reset(4);
  EXPECT_EQ(delayed->perturbation().delay, kDelay);
  const int size = plain->action_spec().size();
  for (int t = 0; t < 40; ++t) {
    const Eigen::VectorXd shifted =
        t < kDelay ? Eigen::VectorXd::Zero(size) : TestAction(t - kDelay, size);
    const StepResult a = delayed->Step(TestAction(t, size));
    const StepResult b = plain->Step(shifted);
    ASSERT_EQ(a.observation, b.observation) << "step " << t;
    ASSERT_EQ(a.reward, b.reward) << "step " << t;
  }
}

TEST_P(PerturbedTaskTest, CloneAndSetStateReproduceThePerturbedFuture) {
  auto env = MakePerturbed(GetParam(), kEveryRange);
  auto clone = env->Clone();  // made in episode 0, as the oracle makes its copies
  env->Reset(21);
  Rollout(*env, 10);
  clone->set_state(env->state());
  EXPECT_EQ(clone->Observation(), env->Observation());
  EXPECT_EQ(PerturbationValues(clone->perturbation()), PerturbationValues(env->perturbation()));
  EXPECT_EQ(Rollout(*clone, 30, 10), Rollout(*env, 30, 10));
  EXPECT_EQ(clone->state(), env->state());
}

// Every feature has a positive scale, so relative noise reaches each one.
// Each feature's `scale` in the task file: the unit of relative noise.
Eigen::ArrayXd FeatureScales(const std::string& task) {
  const std::vector<task::TaskTable> features = task::LoadTaskSpec(task).root.Tables("observation");
  Eigen::ArrayXd scales(features.size());
  for (std::size_t i = 0; i < features.size(); ++i) scales[i] = features[i].Number("scale", 1.0);
  return scales;
}

// Over 200 resets, each feature's noise in units of its scale has a
// standard deviation of 0.1: the sample's lies within 5 of its standard
// errors (0.005) of it.
TEST_P(PerturbedTaskTest, RelativeNoiseReachesEveryFeature) {
  auto plain = MakeEnv(GetParam());
  auto noisy = MakePerturbed(GetParam(), "obs_noise_rel=0.1");
  const Eigen::ArrayXd scales = FeatureScales(GetParam());
  constexpr int kResets = 200;
  Eigen::ArrayXd sum_of_squares = Eigen::ArrayXd::Zero(scales.size());
  for (int seed = 0; seed < kResets; ++seed) {
    const Eigen::ArrayXd noise = (noisy->Reset(seed) - plain->Reset(seed)).array() / scales;
    ASSERT_TRUE(noise.allFinite()) << "seed " << seed;
    sum_of_squares += noise.square();
  }
  const Eigen::ArrayXd std = (sum_of_squares / kResets).sqrt();
  EXPECT_TRUE((std > 0.075).all() && (std < 0.125).all()) << std.transpose();
}

INSTANTIATE_TEST_SUITE_P(Tasks, PerturbedTaskTest, testing::ValuesIn(TaskNames()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(PerturbedEnvTest, DampingChangesThePendulumAndCloneSetStateReproducesIt) {
  auto plain = MakeEnv("pendulum_swingup");
  auto damped = MakePerturbed("pendulum_swingup", "damping=2");
  EXPECT_EQ(damped->Reset(3), plain->Reset(3));
  EXPECT_NE(Rollout(*damped, 20), Rollout(*plain, 20));
  auto clone = damped->Clone();
  auto fresh = MakePerturbed("pendulum_swingup", "damping=2");
  fresh->Reset(99);
  fresh->set_state(damped->state());
  const Trajectory future = Rollout(*damped, 30, 20);
  EXPECT_EQ(Rollout(*clone, 30, 20), future);
  EXPECT_EQ(Rollout(*fresh, 30, 20), future);
}

TEST(PerturbedEnvTest, MassChangesThePendulum) {
  auto plain = MakeEnv("pendulum_swingup");
  auto heavy = MakePerturbed("pendulum_swingup", "mass=1.5");
  heavy->Reset(3);
  plain->Reset(3);
  EXPECT_NE(Rollout(*heavy, 20), Rollout(*plain, 20));
}

TEST(PerturbedEnvTest, GainScalesTheActuatorForce) {
  // Twice the gain with half the action is the same force on a motor.
  auto plain = MakeEnv("pendulum_swingup");
  auto strong = MakePerturbed("pendulum_swingup", "gain=2");
  plain->Reset(5);
  strong->Reset(5);
  for (int t = 0; t < 20; ++t) {
    const Eigen::VectorXd action = 0.5 * TestAction(t, 1);
    const Eigen::VectorXd p = plain->Step(action).observation;
    const Eigen::VectorXd s = strong->Step(0.5 * action).observation;
    ASSERT_TRUE(p.isApprox(s, 1e-12)) << "step " << t;
  }
}

// Noise of std s on every feature: the difference to the noiseless
// trajectory over 1000 steps x 3 features has std s (the sample std of
// n = 3000 normals has a relative standard error of 1/sqrt(2n) = 1.3%; 5%
// is about 4 of them) and mean 0 (standard error s/sqrt(n) = 0.018 s).
TEST(PerturbedEnvTest, ObservationNoiseHasTheRequestedStd) {
  auto plain = MakeEnv("pendulum_swingup");
  auto noisy = MakePerturbed("pendulum_swingup", "obs_noise=0.1");
  const Eigen::VectorXd first = noisy->Reset(9);
  plain->Reset(9);
  EXPECT_EQ(noisy->Observation(), first);
  std::vector<double> noise;
  double lag_product = 0.0, previous = 0.0;
  for (int t = 0; t < 1000; ++t) {
    const Eigen::VectorXd action = TestAction(t, 1);
    const StepResult n = noisy->Step(action);
    const StepResult p = plain->Step(action);
    ASSERT_EQ(n.reward, p.reward);                   // the reward reads the true state
    ASSERT_EQ(n.observation, noisy->Observation());  // Observation() repeats Step's
    for (int i = 0; i < 3; ++i) {
      noise.push_back(n.observation[i] - p.observation[i]);
      lag_product += noise.back() * previous;
      previous = noise.back();
    }
  }
  double mean = 0.0, square = 0.0;
  for (double e : noise) mean += e / noise.size();
  for (double e : noise) square += (e - mean) * (e - mean) / noise.size();
  EXPECT_NEAR(std::sqrt(square), 0.1, 0.005);
  EXPECT_NEAR(mean, 0.0, 4 * 0.018 * 0.1);
  // Independent draws: the lag-1 correlation is within 4 standard errors of 0.
  EXPECT_NEAR(lag_product / noise.size() / 0.01, 0.0, 4.0 / std::sqrt(3000.0));
}

// Relative noise 0.1 on the pendulum's scales (1, 1, 4): stds 0.1, 0.1, 0.4
// (n = 2000 per feature: a relative standard error of 1.6%; 7% is over 4).
TEST(PerturbedEnvTest, RelativeNoiseFollowsEachFeaturesScale) {
  auto plain = MakeEnv("pendulum_swingup");
  auto noisy = MakePerturbed("pendulum_swingup", "obs_noise_rel=0.1");
  plain->Reset(2);
  noisy->Reset(2);
  Eigen::Vector3d square = Eigen::Vector3d::Zero();
  constexpr int kSteps = 2000;
  for (int t = 0; t < kSteps; ++t) {
    const Eigen::VectorXd action = TestAction(t, 1);
    const Eigen::VectorXd e = noisy->Step(action).observation - plain->Step(action).observation;
    square += e.cwiseProduct(e) / kSteps;
  }
  const Eigen::Vector3d expected(0.1, 0.1, 0.4);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(std::sqrt(square[i]), expected[i], 0.07 * expected[i]) << "feature " << i;
  }
}

TEST(PerturbedEnvTest, TheStateKeepsItsLayoutUnlessPerturbed) {
  auto plain = MakeEnv("reacher");
  auto noisy = MakePerturbed("reacher", "obs_noise=0.1");
  auto delayed = MakePerturbed("reacher", "delay=0:4");
  const int size = static_cast<int>(plain->state().size());
  // Values (7), noise key (2), pending actions (longest delay 4 x 2 actions).
  EXPECT_EQ(noisy->state().size(), size + 7 + 2);
  EXPECT_EQ(delayed->state().size(), size + 7 + 2 + 4 * 2);
}

TEST(PerturbedEnvTest, RejectsInvalidPerturbationEntriesInAState) {
  auto env = MakePerturbed("pendulum_swingup", "delay=0:2,mass=0.5:2");
  env->Reset(1);
  Rollout(*env, 5);
  const Eigen::VectorXd good = env->state();
  const int values = static_cast<int>(good.size()) - 7 - 2 - 2;  // the delay of up to 2 steps
  auto expect_refused = [&](int index, double value) {
    Eigen::VectorXd bad = good;
    bad[index] = value;
    EXPECT_THROW(env->set_state(bad), std::invalid_argument) << index << " = " << value;
    EXPECT_EQ(env->state(), good);  // unchanged
  };
  expect_refused(values + 2, 3.0);   // delay above the spec's longest
  expect_refused(values + 2, 0.5);   // not a whole number
  expect_refused(values + 4, -1.0);  // a mass scale <= 0
  expect_refused(values + 7, -1.0);  // the noise key
  expect_refused(values + 8, 4294967296.0);
}

TEST(PerturbedEnvTest, AnInvalidSpecIsRefusedByMakeEnv) {
  EnvOptions options;
  options.perturbation.damping = {-1.0, -1.0};
  EXPECT_THROW(MakeEnv("pendulum_swingup", options), std::invalid_argument);
}

// The recorded action is the one the policy commanded, not the delayed one.
TEST(PerturbedEnvTest, EpisodesRecordTheCommandedActionsAndThePerturbation) {
  auto env = MakePerturbed("pendulum_swingup", "delay=2,mass=0.7:1.3", 20);
  RandomPolicy policy(env->action_spec(), 3), replay(env->action_spec(), 3);
  const Episode episode = RunEpisode(*env, policy, 8);
  for (int t = 0; t < episode.length(); ++t) {
    EXPECT_EQ(episode.actions.row(t).transpose(), replay.Act(Eigen::VectorXd()));
  }
  EXPECT_EQ(episode.perturbation.delay, 2);
  EXPECT_EQ(PerturbationValues(episode.perturbation), PerturbationValues(env->perturbation()));
}

// The oracle copies the env once and restores its state into the copies at
// every step: the state must carry the episode's randomized physics and the
// pending delayed actions. With one candidate (the all-zero plan of a fresh
// oracle) its value is the shaped return of zeros from the true state.
TEST(PerturbedEnvTest, TheOraclePlansOnThePerturbedEpisode) {
  auto env = MakePerturbed("pendulum_swingup", kPhysicsRanges);
  PredictiveSamplingOptions options = OracleOptions("pendulum_swingup");
  options.num_samples = 1;
  PredictiveSamplingPolicy oracle(*env, options);
  env->Reset(17);    // other values than episode 0's, when the oracle copied the env
  Rollout(*env, 5);  // actions pending in the delay queue
  oracle.Act(env->Observation());

  auto truth = env->Clone();
  double value = 0.0;
  for (int t = 0; t < options.horizon; ++t) {
    truth->Step(Eigen::VectorXd::Zero(1));
    value += truth->ShapedReward();
  }
  EXPECT_EQ(oracle.best_value(), value);

  auto nominal = MakeEnv("pendulum_swingup");
  nominal->set_state(env->state().head(nominal->state().size()));
  double nominal_value = 0.0;
  for (int t = 0; t < options.horizon; ++t) {
    nominal->Step(Eigen::VectorXd::Zero(1));
    nominal_value += nominal->ShapedReward();
  }
  EXPECT_NE(oracle.best_value(), nominal_value);
}

}  // namespace
}  // namespace dfmpc::envs
