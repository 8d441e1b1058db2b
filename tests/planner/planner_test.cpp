// The planner with the shipped pendulum model on the real MuJoCo task.
#include "dfmpc/planner/planner.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/tokens.h"
#include "dfmpc/worldmodel/transformer.h"
#include "plan_schedule.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

TEST(PlannerTest, WarmEqualsReplanOnTheFirstStep) {
  for (const bool guided : {false, true}) {
    PlannerOptions warm = Small(PlanMode::kWarm), replan = Small(PlanMode::kReplan);
    warm.guidance_scale = replan.guidance_scale = guided ? 0.05 : 0.0;
    auto warm_planner = MakePlanner(warm), replan_planner = MakePlanner(replan);
    const Eigen::Vector3d observation(-0.9, 0.43589, 1.5);
    warm_planner->Reset(observation);
    replan_planner->Reset(observation);
    const Eigen::VectorXd a = warm_planner->Act(observation);
    const Eigen::VectorXd b = replan_planner->Act(observation);
    // The first token never sees later ones (causal attention), so the replan
    // pyramid's extra calls leave it as the warm plan has it: same numbers.
    EXPECT_EQ(a, b) << "guided " << guided;
    EXPECT_EQ(warm_planner->plan().tokens.row(0), replan_planner->plan().tokens.row(0));
    EXPECT_EQ(warm_planner->plan().levels, RestingLevels(4, 16, 0.25));
    EXPECT_EQ(replan_planner->plan().levels, std::vector<int>(16, 0));
    EXPECT_LT(warm_planner->last_step().calls, replan_planner->last_step().calls);
  }
}

// The shipped pendulum's weights in a model with the outcome input (its
// own weights untrained): enough to check what guidance does to a step.
worldmodel::Checkpoint ConditionedPendulum() {
  worldmodel::Checkpoint conditioned = Pendulum();
  conditioned.info.config.outcome_input = true;
  conditioned.model = worldmodel::DfTransformer(conditioned.info.config, 5);
  torch::NoGradGuard no_grad;
  const auto trained = Pendulum().model->named_parameters();
  for (auto& parameter : conditioned.model->named_parameters()) {
    if (trained.contains(parameter.key())) parameter.value().copy_(trained[parameter.key()]);
  }
  conditioned.model->eval();
  return conditioned;
}

// Guidance runs a conditioned and an unconditioned call over one cache: the
// first token still never depends on the calls the replan adds, and the
// guidance reaches the action.
TEST(PlannerTest, OutcomeGuidanceKeepsWarmEqualToReplanOnTheFirstStep) {
  const worldmodel::Checkpoint conditioned = ConditionedPendulum();
  const Eigen::Vector3d observation(-0.9, 0.43589, 1.5);
  std::int64_t token_forwards = 0;
  auto act = [&](PlanMode mode, double weight) {
    PlannerOptions options = Small(mode);
    options.outcome_guidance = weight;
    Planner planner(conditioned, MakeTaskCost(kPendulum), options);
    planner.Reset(observation);
    const Eigen::VectorXd action = planner.Act(observation);
    token_forwards = planner.last_step().token_forwards;
    return action;
  };
  const Eigen::VectorXd warm = act(PlanMode::kWarm, 2.5);
  const std::int64_t two_call_forwards = token_forwards;
  EXPECT_EQ(warm, act(PlanMode::kReplan, 2.5));
  EXPECT_NE(warm, act(PlanMode::kWarm, 0.0));
  // Weights 0 and 1 run the model once per window, others twice.
  const std::int64_t one_call_forwards = token_forwards;
  act(PlanMode::kWarm, 1.0);
  EXPECT_EQ(token_forwards, one_call_forwards);
  EXPECT_GT(two_call_forwards, one_call_forwards);
  EXPECT_LE(two_call_forwards, 2 * one_call_forwards);
  // Weight 0 is the planner without guidance, bit for bit.
  PlannerOptions plain = Small(PlanMode::kWarm);
  auto unguided = MakePlanner(plain);
  unguided->Reset(observation);
  EXPECT_EQ(act(PlanMode::kWarm, 0.0), unguided->Act(observation));
}

TEST(PlannerTest, ContextCacheEqualsEncodingTheRealTokensAtOnce) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.context_length = 12;
  auto planner = MakePlanner(options);
  const int steps = 10;  // 11 real tokens: below the capacity, no eviction yet
  const Trajectory trajectory = Drive(*planner, steps, 3);
  const worldmodel::KvCache& cache = planner->context_cache();
  ASSERT_EQ(cache.persistent_size(),
            steps);  // o_0 .. o_{steps-1}; the last is not observed yet
  ASSERT_EQ(cache.scratch_size(), 0);

  // The same real tokens [a_{s-1}, o_s, o_s - o_{s-1}], built from the
  // trajectory by the training code path and encoded in one causal pass.
  torch::Tensor observations = torch::empty({steps, 3}, torch::kDouble);
  torch::Tensor actions = torch::empty({steps - 1, 1}, torch::kDouble);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 3; ++i) observations[s][i] = trajectory.observations[s](i);
    if (s + 1 < steps) actions[s][0] = trajectory.actions[s](0);
  }
  worldmodel::Checkpoint model = Pendulum();  // shares the weights
  // Built in double like the planner's tokens: the changes o_s - o_{s-1}
  // are small, and normalization magnifies their rounding.
  const torch::Tensor tokens = model.normalizer.Normalize(
      worldmodel::EpisodeTokens(model.info.layout, observations, actions).to(torch::kFloat));
  torch::NoGradGuard no_grad;
  worldmodel::KvCacheOptions cache_options = model.model->CacheOptions();
  cache_options.capacity = steps;
  worldmodel::KvCache reference(cache_options);
  worldmodel::WindowKeysValues kv;
  model.model->Forward(tokens.unsqueeze(0), torch::full({steps}, -1, torch::kLong), &reference,
                       &kv);
  reference.Append(kv.keys, kv.values);
  // Same arithmetic, different matrix shapes: fp32 GEMMs may sum in another
  // order, so allow a few float ulps of the O(1) activations.
  for (int layer = 0; layer < model.info.config.depth; ++layer) {
    const auto got = cache.Segments(layer, 1), want = reference.Segments(layer, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LT((got[0].keys - want[0].keys).abs().max().item<double>(), 1e-4) << "layer " << layer;
    EXPECT_LT((got[0].values - want[0].values).abs().max().item<double>(), 1e-4)
        << "layer " << layer;
  }
}

TEST(PlannerTest, PlanCacheShiftsByOneTokenAcrossAStep) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.renoise_levels = 0;  // tokens whose level stays put keep their values
  auto planner = MakePlanner(options);
  auto env = envs::MakeEnv(kPendulum);
  Eigen::VectorXd observation = env->Reset(5);
  planner->Reset(observation);
  const Eigen::VectorXd action = planner->Act(observation);
  const Plan before = planner->plan();
  planner->Act(env->Step(action).observation);
  const Plan after = planner->plan();
  const std::vector<int> rest = RestingLevels(4, 16, 0.25);
  EXPECT_EQ(after.levels, rest);
  // Token t now is token t + 1 before; the one call moved it only where its
  // resting level dropped (rest[t + 1] > rest[t]).
  int kept = 0;
  for (int t = 0; t + 1 < 16; ++t) {
    if (rest[t + 1] == rest[t]) {
      EXPECT_EQ(after.tokens.row(t), before.tokens.row(t + 1)) << "token " << t;
      ++kept;
    } else {
      EXPECT_NE(after.tokens.row(t), before.tokens.row(t + 1)) << "token " << t;
    }
  }
  EXPECT_GT(kept, 8);
  EXPECT_EQ(planner->last_step().calls, 1);
  // The real token plus the window up to the last moving token.
  EXPECT_EQ(planner->last_step().token_forwards, 1 + 13);
}

TEST(PlannerTest, ContextMemoryStaysFlatOverLongRuns) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.context_length = 6;
  options.sinks = 1;
  auto planner = MakePlanner(options);
  const int64_t bytes = planner->context_cache().StorageBytes();
  Drive(*planner, 40, 1);
  const worldmodel::KvCache& cache = planner->context_cache();
  EXPECT_EQ(cache.StorageBytes(), bytes);
  // One slot fewer than the context: the newest real token rides in the
  // next step's first call.
  EXPECT_EQ(cache.persistent_size(), 5);
  // The sink (o_0) and the most recent real tokens are kept.
  EXPECT_EQ(cache.KeptPositions(), (std::vector<int64_t>{0, 36, 37, 38, 39}));
}

TEST(PlannerTest, BeatsRandomOnAShortPendulumEpisode) {
  // Seeds whose initial angle lies within 60 degrees of upright: the planner
  // must catch and hold the pendulum, which a random policy lets fall.
  envs::EnvOptions env_options;
  env_options.episode_physics_steps = 200;
  auto env = envs::MakeEnv(kPendulum, env_options);
  PlannerOptions options;  // the defaults the demo uses
  auto planner = MakePlanner(options);
  envs::RandomPolicy random(env->action_spec(), 0);
  struct Adapter : envs::Policy {
    explicit Adapter(Planner& p) : planner(p) {}
    void Reset(const Eigen::VectorXd& o) override { planner.Reset(o); }
    Eigen::VectorXd Act(const Eigen::VectorXd& o) override { return planner.Act(o); }
    Planner& planner;
  } adapter(*planner);
  double planned = 0.0, baseline = 0.0;
  int episodes = 0;
  for (std::uint64_t seed = 0; episodes < 2 && seed < 50; ++seed) {
    if (env->Reset(seed)(0) < std::cos(M_PI / 3)) continue;
    planned += envs::RunEpisode(*env, adapter, seed).Return();
    baseline += envs::RunEpisode(*env, random, seed).Return();
    ++episodes;
  }
  ASSERT_EQ(episodes, 2);
  EXPECT_GT(planned, baseline + 50.0) << "planner " << planned << ", random " << baseline;
}

TEST(PlannerTest, RejectsBadInputAndStaysUsable) {
  auto planner = MakePlanner(Small(PlanMode::kWarm));
  EXPECT_THROW(planner->Act(Eigen::Vector3d(1, 0, 0)),
               std::invalid_argument);  // before Reset
  const Eigen::Vector3d good(1.0, 0.0, 0.0);
  planner->Reset(good);
  planner->Act(good);
  const Plan plan = planner->plan();
  EXPECT_THROW(planner->Act(Eigen::Vector2d(1, 0)), std::invalid_argument);
  EXPECT_THROW(planner->Act(Eigen::Vector3d(1, std::nan(""), 0)), std::invalid_argument);
  EXPECT_THROW(planner->Act(Eigen::Vector3d(1, 0, std::numeric_limits<double>::infinity())),
               std::invalid_argument);
  EXPECT_THROW(planner->Reset(Eigen::VectorXd(5)), std::invalid_argument);
  EXPECT_EQ(planner->steps(), 1);
  EXPECT_EQ(planner->plan().tokens, plan.tokens);
  const Eigen::VectorXd action = planner->Act(good);
  EXPECT_EQ(planner->steps(), 2);
  EXPECT_TRUE(action.allFinite());
  EXPECT_LE(action.cwiseAbs().maxCoeff(), 1.0);
}

TEST(PlannerTest, RejectsImpossibleOptionsAndForeignModels) {
  for (auto breaks : std::vector<void (*)(PlannerOptions&)>{
           [](PlannerOptions& o) { o.horizon = 0; },
           [](PlannerOptions& o) { o.calls_per_step = 0; },
           [](PlannerOptions& o) { o.candidates = 0; }, [](PlannerOptions& o) { o.levels = 0; },
           [](PlannerOptions& o) { o.guidance_scale = -1; },
           [](PlannerOptions& o) { o.renoise_levels = -1; },
           // No room left in the model's window for the two context tokens:
           [](PlannerOptions& o) { o.horizon = Pendulum().info.train_window - 1; },
           // Context plus plan one token past the window:
           [](PlannerOptions& o) {
             o.context_length = Pendulum().info.train_window - o.horizon + 1;
           },
           // The shipped pendulum has no outcome input:
           [](PlannerOptions& o) { o.outcome_guidance = 2.0; },
           [](PlannerOptions& o) { o.target_outcome = 1.5; },
           [](PlannerOptions& o) { o.uncertainty = 0.1; }}) {  // ceil(H u) < K: no warm step
    PlannerOptions options = Small(PlanMode::kWarm);
    breaks(options);
    EXPECT_THROW(MakePlanner(options), std::invalid_argument);
  }
  EXPECT_THROW(Planner(Pendulum(), MakeTaskCost("cartpole_swingup"), Small(PlanMode::kWarm)),
               std::invalid_argument);
  try {
    Planner::FromFile(ModelPath(kPendulum), {}, "cartpole_swingup");
    FAIL() << "a pendulum model was accepted for cartpole";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pendulum_swingup"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dfmpc::planner
