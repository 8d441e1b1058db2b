#include "dfmpc/worldmodel/mlp_ensemble.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr TokenLayout kLayout{1, 2};

MlpDynamicsConfig SmallConfig() {
  MlpDynamicsConfig config;
  config.layout = kLayout;
  config.width = 16;
  config.hidden_layers = 2;
  return config;
}

MlpEnsemble SmallEnsemble(int size) {
  std::vector<MlpDynamics> members;  // of different initial weights
  for (int m = 0; m < size; ++m) members.emplace_back(SmallConfig(), m + 1);
  MlpEnsemble ensemble(members);
  ensemble->eval();
  return ensemble;
}

MlpEnsembleInfo Info(int size) {
  MlpEnsembleInfo info;
  info.model.task = "pendulum_swingup";
  info.model.config = SmallConfig();
  info.action_repeat = 2;
  for (int m = 0; m < size; ++m) info.seeds.push_back(10 + m);
  return info;
}

Normalizer Identity() { return Normalizer(torch::zeros({3}), torch::ones({3})); }

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_ensemble_" + name;
}

void ExpectLoadError(const std::string& path, const CheckpointExpectation& expect,
                     const std::string& needle) {
  try {
    LoadMlpEnsemble(path, expect);
    ADD_FAILURE() << "no error for " << path;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(MlpEnsembleTest, PredictsTheMembersMean) {
  MlpEnsemble ensemble = SmallEnsemble(3);
  const at::Tensor token = torch::randn({4, 3}), action = torch::randn({4, 1});
  torch::NoGradGuard no_grad;
  const at::Tensor mean =
      (ensemble->member(0).Forward(token, action) + ensemble->member(1).Forward(token, action) +
       ensemble->member(2).Forward(token, action)) /
      3.0;
  EXPECT_TRUE(torch::allclose(ensemble->Forward(token, action), mean, 1e-6, 1e-6));
  const at::Tensor rollout = ensemble->Rollout(token, torch::randn({4, 5, 1}));
  EXPECT_EQ(rollout.sizes(), (at::IntArrayRef{4, 5, 3}));
}

TEST(MlpEnsembleTest, DisagreementPenaltyIsTheMembersSpreadAlongTheMeanRollout) {
  MlpEnsemble ensemble = SmallEnsemble(3);
  const at::Tensor token = torch::randn({4, 3}), actions = torch::randn({4, 5, 1});
  torch::NoGradGuard no_grad;
  const at::Tensor plain = ensemble->Rollout(token, actions);
  const MlpEnsembleImpl::PenalizedRollout off =
      ensemble->RolloutPenalizingDisagreement(token, actions, 0.0);
  EXPECT_TRUE(torch::equal(off.tokens, plain));
  EXPECT_TRUE(torch::equal(off.penalty, torch::zeros({4})));

  const MlpEnsembleImpl::PenalizedRollout weighed =
      ensemble->RolloutPenalizingDisagreement(token, actions, 2.0);
  // The same path as the plain rollout, up to the mean's summation order.
  EXPECT_TRUE(torch::allclose(weighed.tokens, plain, 1e-5, 1e-5));
  ASSERT_EQ(weighed.penalty.sizes(), (at::IntArrayRef{4}));
  // Candidate 2 by hand: at each step the members' population std from the
  // rollout's previous token, averaged over the two observation features.
  double spread = 0.0;
  for (int64_t h = 0; h < 5; ++h) {
    const at::Tensor previous = h == 0 ? token[2].unsqueeze(0) : plain[2][h - 1].unsqueeze(0);
    const at::Tensor action = actions[2][h].unsqueeze(0);
    const at::Tensor predictions = torch::stack({ensemble->member(0).Forward(previous, action),
                                                 ensemble->member(1).Forward(previous, action),
                                                 ensemble->member(2).Forward(previous, action)});
    const at::Tensor centred = predictions - predictions.mean(0);
    spread += (centred * centred).mean(0).sqrt().mean().item<double>();
  }
  EXPECT_GT(spread, 1e-3);  // members of different initial weights disagree
  EXPECT_NEAR(weighed.penalty[2].item<double>(), 2.0 * spread, 1e-4);
  // One member agrees with itself everywhere.
  EXPECT_TRUE(
      torch::equal(SmallEnsemble(1)->RolloutPenalizingDisagreement(token, actions, 2.0).penalty,
                   torch::zeros({4})));
}

TEST(MlpEnsembleTest, FileRoundTripKeepsMembersSeedsAndControlRate) {
  MlpEnsemble ensemble = SmallEnsemble(3);
  const std::string path = TempPath("good.pt");
  SaveMlpEnsemble(path, Info(3), Identity(), *ensemble);
  MlpEnsembleCheckpoint loaded = LoadMlpEnsemble(path, {"pendulum_swingup", 3});
  EXPECT_EQ(loaded.ensemble->size(), 3);
  EXPECT_EQ(loaded.info.seeds, (std::vector<std::uint64_t>{10, 11, 12}));
  EXPECT_EQ(loaded.info.action_repeat, 2);
  const at::Tensor token = torch::randn({2, 3}), actions = torch::randn({2, 4, 1});
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(
      torch::equal(loaded.ensemble->Rollout(token, actions), ensemble->Rollout(token, actions)));
}

TEST(MlpEnsembleTest, SavingInfoThatDoesNotFitIsRefused) {
  MlpEnsemble ensemble = SmallEnsemble(2);
  EXPECT_THROW(SaveMlpEnsemble(TempPath("seeds.pt"), Info(3), Identity(), *ensemble),
               std::invalid_argument);
  MlpEnsembleInfo no_rate = Info(2);
  no_rate.action_repeat = 0;
  EXPECT_THROW(SaveMlpEnsemble(TempPath("rate.pt"), no_rate, Identity(), *ensemble),
               std::invalid_argument);
}

TEST(MlpEnsembleTest, WrongFilesGiveClearErrors) {
  ExpectLoadError(TempPath("missing.pt"), {}, "does not exist");

  MlpEnsemble ensemble = SmallEnsemble(2);
  const std::string good = TempPath("pendulum.pt");
  SaveMlpEnsemble(good, Info(2), Identity(), *ensemble);
  ExpectLoadError(good, {"reacher", 0}, "trained for task 'pendulum_swingup', not 'reacher'");

  const std::string single = TempPath("single.pt");
  MlpModelInfo single_info = Info(1).model;
  SaveMlpCheckpoint(single, single_info, Identity(), ensemble->member(0));
  ExpectLoadError(single, {}, "not an MLP dynamics ensemble (format 'dfmpc-mlp-dynamics')");
  EXPECT_THROW(LoadMlpCheckpoint(good), std::runtime_error);  // and the other way round

  const std::string transformer = TempPath("transformer.pt");
  testing::SaveTinyTransformer(transformer, kLayout, Identity());
  ExpectLoadError(transformer, {}, "not an MLP dynamics ensemble");
}

}  // namespace
}  // namespace dfmpc::worldmodel
