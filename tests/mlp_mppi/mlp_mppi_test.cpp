// The learned-dynamics MPPI peer (examples/cli/mlp_mppi_policy.h) on a tiny
// ensemble trained here on a small collected pendulum dataset.
#include "dfmpc/planner/mlp_mppi.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <Eigen/Core>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "mlp_mppi_policy.h"

namespace dfmpc::cli {
namespace {

const std::string kPendulum = "pendulum_swingup";
constexpr worldmodel::TokenLayout kLayout{1, 3};  // torque; cos, sin, angular velocity

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_mlp_mppi_" + name;
}

at::Tensor ToTensor(const Eigen::MatrixXd& m) {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows = m;
  return torch::from_blob(rows.data(), {rows.rows(), rows.cols()}, torch::kDouble)
      .to(torch::kFloat);
}

worldmodel::MlpDynamicsConfig SmallConfig() {
  worldmodel::MlpDynamicsConfig config;
  config.layout = kLayout;
  config.width = 64;
  return config;
}

// `size` members, trained for `steps` on `sequences` (normalized) unless 0.
worldmodel::MlpEnsemble TrainedEnsemble(int size, int steps,
                                        const std::vector<at::Tensor>& sequences) {
  std::vector<worldmodel::MlpDynamics> members;
  for (int m = 0; m < size; ++m) {
    members.emplace_back(SmallConfig(), /*init_seed=*/m);
    worldmodel::MlpTrainOptions options;
    options.steps = steps;
    options.learning_rate = 3e-3;
    options.seed = m;
    if (steps > 0) worldmodel::TrainMlpDynamics(*members.back(), sequences, options);
  }
  return worldmodel::MlpEnsemble(members);
}

worldmodel::MlpEnsembleInfo Info(const std::string& task, int size) {
  worldmodel::MlpEnsembleInfo info;
  info.model.task = task;
  info.model.config = SmallConfig();
  for (int m = 0; m < size; ++m) info.seeds.push_back(m);
  return info;
}

// An untrained ensemble file for `task`.
std::string UntrainedFile(const std::string& task) {
  const std::string path = TempPath(task + ".pt");
  worldmodel::MlpEnsemble ensemble = TrainedEnsemble(2, 0, {});
  worldmodel::SaveMlpEnsemble(
      path, Info(task, 2), worldmodel::Normalizer(torch::zeros({4}), torch::ones({4})), *ensemble);
  return path;
}

void ExpectError(const std::string& path, const std::string& needle) {
  try {
    MakeMlpMppiPolicy(path, task::LoadTaskSpec(kPendulum), {});
    ADD_FAILURE() << "no error for '" << path << "'";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(MlpMppiTest, BeatsRandomOnAShortPendulumEpisode) {
  envs::EnvOptions env_options;
  env_options.episode_physics_steps = 200;
  auto data_env = envs::MakeEnv(kPendulum, env_options);
  // Swinging up takes several seconds: 400 steps (8 s) leave time to stay up.
  env_options.episode_physics_steps = 400;
  auto env = envs::MakeEnv(kPendulum, env_options);

  // A small dataset from the data policy of `dfmpc collect`.
  std::vector<at::Tensor> sequences;
  auto mixed = envs::MakeBaselinePolicy("mixed", *data_env, /*seed=*/1);
  for (int e = 0; e < 8; ++e) {
    const envs::Episode episode = envs::RunEpisode(*data_env, *mixed, 100 + e);
    sequences.push_back(worldmodel::EpisodeTokens(kLayout, ToTensor(episode.observations),
                                                  ToTensor(episode.actions)));
  }
  worldmodel::MlpEnsembleCheckpoint checkpoint;
  checkpoint.info = Info(kPendulum, 2);
  checkpoint.normalizer = worldmodel::Normalizer::Fit(sequences);
  for (at::Tensor& s : sequences) s = checkpoint.normalizer.Normalize(s);
  checkpoint.ensemble = TrainedEnsemble(2, 800, sequences);

  planner::MlpMppiOptions options;
  options.num_samples = 32;
  MlpMppiPolicy policy(
      std::make_unique<planner::MlpMppi>(checkpoint, planner::MakeTaskCost(kPendulum), options));
  const double planned = envs::RunEpisode(*env, policy, /*seed=*/0).Return();
  envs::RandomPolicy random(env->action_spec(), 0);
  const double baseline = envs::RunEpisode(*env, random, /*seed=*/0).Return();
  std::printf("mlp-mppi %.1f, random %.1f over 400 steps\n", planned, baseline);
  // Measured 152 against 0 (126 to 326 over episode seeds 0..5).
  EXPECT_GT(planned, baseline + 50.0);
  ASSERT_EQ(policy.records().size(), 400u);
  EXPECT_EQ(policy.records().front().calls, options.horizon);
}

// The peer is a library class (planner/mlp_mppi.h) a controller uses with
// Eigen alone: the shipped ensemble names its task, which supplies the cost.
TEST(MlpMppiTest, TheLibraryPeerTakesItsFilesTask) {
  const std::string path =
      std::string(DFMPC_SHIPPED_MODELS_DIR) + "/" + kPendulum + "_mlp_ensemble.pt";
  planner::MlpMppiOptions options;
  options.num_samples = 8;
  const auto mppi = planner::MlpMppi::FromFile(path, options);
  EXPECT_EQ(mppi->action_repeat(), 1);
  const Eigen::Vector3d hanging(-1.0, 0.0, 0.0);
  mppi->Reset(hanging);
  const Eigen::VectorXd action = mppi->Act(hanging);
  ASSERT_EQ(action.size(), 1);
  EXPECT_LE(std::abs(action[0]), 1.0);
  EXPECT_THROW(planner::MlpMppi::FromFile(path, options, "reacher"), std::runtime_error);
}

// The peer values its rollouts with a critic as the planner does
// (PlannerOptions::value_model): the term changes the choice, and a critic
// of another task or an impossible step is refused.
TEST(MlpMppiTest, ACriticJoinsTheRolloutsCost) {
  const std::string models = std::string(DFMPC_SHIPPED_MODELS_DIR) + "/";
  const std::string ensemble = models + "cartpole_swingup_mlp_ensemble.pt";
  planner::MlpMppiOptions options;
  options.num_samples = 16;
  const auto plain = planner::MlpMppi::FromFile(ensemble, options);
  options.value_model = models + "cartpole_swingup_value.pt";
  options.value_weight = 10.0;  // the critic's term outweighs the task cost
  const auto valued = planner::MlpMppi::FromFile(ensemble, options);
  Eigen::VectorXd hanging = Eigen::VectorXd::Zero(5);
  hanging << 0.0, -1.0, 0.0, 0.0, 0.0;  // cart position, pole cos and sin, velocities
  plain->Reset(hanging);
  valued->Reset(hanging);
  // The same seed samples the same candidates: only the choice differs.
  EXPECT_NE(plain->Act(hanging), valued->Act(hanging));
  EXPECT_THROW(planner::MlpMppi::FromFile(models + kPendulum + "_mlp_ensemble.pt", options),
               std::runtime_error);
  options.value_step = options.horizon + 1;
  EXPECT_THROW(planner::MlpMppi::FromFile(ensemble, options), std::invalid_argument);
}

// The members' disagreement joins the cost (MlpMppiOptions::disagreement):
// weighed heavily, it changes the choice among the same candidates.
TEST(MlpMppiTest, DisagreementJoinsTheRolloutsCost) {
  const std::string ensemble =
      std::string(DFMPC_SHIPPED_MODELS_DIR) + "/cartpole_swingup_mlp_ensemble.pt";
  planner::MlpMppiOptions options;
  options.num_samples = 16;
  const auto plain = planner::MlpMppi::FromFile(ensemble, options);
  options.disagreement = 100.0;  // the members' spread outweighs the task cost
  const auto cautious = planner::MlpMppi::FromFile(ensemble, options);
  Eigen::VectorXd hanging = Eigen::VectorXd::Zero(5);
  hanging << 0.0, -1.0, 0.0, 0.0, 0.0;
  plain->Reset(hanging);
  cautious->Reset(hanging);
  EXPECT_NE(plain->Act(hanging), cautious->Act(hanging));
  options.disagreement = -1.0;
  EXPECT_THROW(planner::MlpMppi::FromFile(ensemble, options), std::invalid_argument);
}

TEST(MlpMppiTest, MissingFileIsAClearError) {
  ExpectError(TempPath("missing.pt"), "does not exist");
  ExpectError("", "--mlp-model");
}

TEST(MlpMppiTest, EnsembleForAnotherTaskIsAClearError) {
  ExpectError(UntrainedFile("reacher"), "trained for task 'reacher', not 'pendulum_swingup'");
}

TEST(MlpMppiTest, FileThatIsNotAnEnsembleIsAClearError) {
  worldmodel::MlpModelInfo single_info = Info(kPendulum, 1).model;
  const std::string single = TempPath("single.pt");
  worldmodel::MlpDynamics model(SmallConfig());
  worldmodel::SaveMlpCheckpoint(
      single, single_info, worldmodel::Normalizer(torch::zeros({4}), torch::ones({4})), *model);
  ExpectError(single, "not an MLP dynamics ensemble (format 'dfmpc-mlp-dynamics')");
  ExpectError(std::string(DFMPC_SHIPPED_MODELS_DIR) + "/pendulum_swingup.pt",
              "not an MLP dynamics ensemble");
}

TEST(MlpMppiTest, SameSeedSameActionsInBothSelections) {
  const std::string path = UntrainedFile(kPendulum);
  for (double temperature : {0.0, 0.1}) {
    planner::MlpMppiOptions options;
    options.temperature = temperature;
    options.num_samples = 8;
    auto first = MakeMlpMppiPolicy(path, task::LoadTaskSpec(kPendulum), options);
    auto second = MakeMlpMppiPolicy(path, task::LoadTaskSpec(kPendulum), options);
    Eigen::VectorXd observation(3);
    observation << -1.0, 0.1, 0.5;  // hanging, slightly off, turning
    first->Reset(observation);
    second->Reset(observation);
    for (int step = 0; step < 3; ++step) {
      const Eigen::VectorXd action = first->Act(observation);
      EXPECT_EQ(action, second->Act(observation)) << "temperature " << temperature;
      EXPECT_TRUE(action.allFinite() && action.cwiseAbs().maxCoeff() <= 1.0);
    }
    EXPECT_THROW(first->Act(Eigen::VectorXd::Zero(2)), std::invalid_argument);
  }
}

TEST(MlpMppiTest, ImpossibleOptionsAreRefused) {
  const std::string path = UntrainedFile(kPendulum);
  planner::MlpMppiOptions options;
  options.num_knots = 1;
  EXPECT_THROW(MakeMlpMppiPolicy(path, task::LoadTaskSpec(kPendulum), options),
               std::invalid_argument);
  options = {};
  options.temperature = -1.0;
  EXPECT_THROW(MakeMlpMppiPolicy(path, task::LoadTaskSpec(kPendulum), options),
               std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::cli
