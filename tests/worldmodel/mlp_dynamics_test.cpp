#include "dfmpc/worldmodel/mlp_dynamics.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr TokenLayout kLayout{1, 2};

// Normalized-scale episodes of a damped rotation driven by random actions:
// tokens [a_{t-1}, o_t] with o_{t+1} = R o_t + 0.3 a_t.
std::vector<at::Tensor> LinearEpisodes(int count, int length, uint64_t seed) {
  torch::manual_seed(seed);
  const at::Tensor rotation = torch::tensor({0.95f, -0.2f, 0.2f, 0.95f}).view({2, 2});
  std::vector<at::Tensor> episodes;
  for (int e = 0; e < count; ++e) {
    at::Tensor observation = torch::randn({2});
    at::Tensor action = torch::zeros({1});
    std::vector<at::Tensor> tokens;
    for (int t = 0; t < length; ++t) {
      tokens.push_back(torch::cat({action, observation}));
      action = torch::rand({1}) * 2 - 1;
      observation = rotation.matmul(observation) + 0.3 * action;
    }
    episodes.push_back(torch::stack(tokens));
  }
  return episodes;
}

MlpDynamics SmallModel(uint64_t seed = 5) {
  MlpDynamicsConfig config;
  config.layout = kLayout;
  config.width = 64;
  MlpDynamics model(config, seed);
  model->eval();
  return model;
}

MlpTrainOptions FastOptions() {
  MlpTrainOptions options;
  options.steps = 300;
  options.batch_size = 64;
  options.learning_rate = 3e-3;
  options.seed = 11;
  return options;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_mlp_" + name;
}

MlpModelInfo Info() {
  MlpModelInfo info;
  info.task = "pendulum_swingup";
  info.config = SmallModel()->config();
  return info;
}

Normalizer Identity() { return Normalizer(torch::zeros({3}), torch::ones({3})); }

TEST(MlpDynamicsTest, TrainingLowersValidationLossClearly) {
  MlpDynamics model = SmallModel();
  const auto validation = LinearEpisodes(3, 40, 2);
  const double before = MlpDynamicsLoss(*model, validation);
  int calls = 0;
  TrainMlpDynamics(*model, LinearEpisodes(12, 40, 1), FastOptions(),
                   [&](int step, double) { EXPECT_EQ(step, ++calls); });
  const double after = MlpDynamicsLoss(*model, validation);
  EXPECT_EQ(calls, 300);
  EXPECT_LT(after, 0.1 * before) << "before " << before << ", after " << after;
}

TEST(MlpDynamicsTest, TrainingIsDeterministicForASeed) {
  const auto train = LinearEpisodes(4, 20, 1);
  MlpTrainOptions options = FastOptions();
  options.steps = 20;
  MlpDynamics first = SmallModel(), second = SmallModel();
  TrainMlpDynamics(*first, train, options);
  TrainMlpDynamics(*second, train, options);
  EXPECT_DOUBLE_EQ(MlpDynamicsLoss(*first, train), MlpDynamicsLoss(*second, train));
}

TEST(MlpDynamicsTest, CheckpointRoundTripGivesIdenticalOutputs) {
  MlpDynamics model = SmallModel();
  const std::string path = TempPath("round_trip.pt");
  const Normalizer normalizer(torch::tensor({0.1f, 0.2f, 0.3f}), torch::tensor({1.f, 2.f, 3.f}));
  MlpModelInfo info = Info();
  info.notes = "round trip";
  SaveMlpCheckpoint(path, info, normalizer, *model);
  MlpCheckpoint loaded = LoadMlpCheckpoint(path, {"pendulum_swingup", 3});
  EXPECT_EQ(loaded.info.task, "pendulum_swingup");
  EXPECT_EQ(loaded.info.notes, "round trip");
  EXPECT_EQ(loaded.info.config.width, 64);
  EXPECT_EQ(loaded.info.library_version, LibraryVersion());
  EXPECT_TRUE(torch::equal(loaded.normalizer.scale(), normalizer.scale()));
  const at::Tensor token = torch::randn({5, 3}), actions = torch::randn({5, 4, 1});
  EXPECT_TRUE(torch::equal(loaded.model->Rollout(token, actions), model->Rollout(token, actions)));
}

TEST(MlpDynamicsTest, BadFilesGiveClearErrors) {
  auto expect_error = [](const std::string& path, const CheckpointExpectation& expect,
                         const std::string& needle) {
    try {
      LoadMlpCheckpoint(path, expect);
      ADD_FAILURE() << "no error for " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(TempPath("missing.pt"), {}, "does not exist");
  const std::string garbage = TempPath("garbage.pt");
  std::ofstream(garbage) << "not a model";
  expect_error(garbage, {}, "checksum mismatch: the file is corrupt");

  MlpDynamics model = SmallModel();
  const std::string good = TempPath("good.pt");
  SaveMlpCheckpoint(good, Info(), Identity(), *model);
  expect_error(good, {"reacher", 0}, "trained for task 'pendulum_swingup'");
  expect_error(good, {"", 7}, "token dimension 3");

  const std::string transformer = TempPath("transformer.pt");
  testing::SaveTinyTransformer(transformer, kLayout, Identity());
  expect_error(transformer, {}, "not an MLP dynamics model");
}

TEST(MlpDynamicsTest, RolloutHasTheHorizonAndFollowsTheGivenActions) {
  MlpDynamics model = SmallModel();
  const at::Tensor token = torch::randn({2, 3});
  at::Tensor actions = torch::randn({2, 6, 1});
  const at::Tensor rolled = model->Rollout(token, actions);
  ASSERT_EQ(rolled.sizes(), (at::IntArrayRef{2, 6, 3}));
  EXPECT_TRUE(torch::equal(rolled.slice(2, 0, 1), actions));
  EXPECT_TRUE(torch::allclose(rolled.select(1, 0).slice(1, 1),
                              model->Forward(token, actions.select(1, 0))));

  actions[0][3][0] += 1.0;
  const at::Tensor changed = model->Rollout(token, actions);
  EXPECT_TRUE(torch::equal(changed.slice(1, 0, 3), rolled.slice(1, 0, 3)));
  EXPECT_FALSE(torch::allclose(changed[0][3], rolled[0][3]));
  EXPECT_TRUE(torch::equal(changed[1], rolled[1]));
  EXPECT_THROW(model->Rollout(token, torch::randn({3, 6, 1})), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
