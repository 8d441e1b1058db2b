#include "dfmpc/worldmodel/value_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_value_" + name;
}

ValueModelConfig SmallConfig(int observation_dim) {
  ValueModelConfig config;
  config.observation_dim = observation_dim;
  config.width = 32;
  config.hidden_layers = 2;
  config.discount = 0.9;
  return config;
}

void ExpectLoadError(const std::string& path, const CheckpointExpectation& expect,
                     const std::string& needle) {
  try {
    LoadValueModel(path, expect);
    ADD_FAILURE() << "no error for " << path;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(ValueModelTest, TailIsWhereTheCutOffReturnWeighsMoreThanFivePercent) {
  EXPECT_EQ(TruncatedTail(0.99), 299);  // 0.99^298 = 0.0500 > 0.05 >= 0.99^299
  EXPECT_EQ(TruncatedTail(0.5), 5);     // 0.5^4 = 0.0625, 0.5^5 = 0.03125
  EXPECT_THROW(TruncatedTail(1.0), std::invalid_argument);
}

TEST(ValueModelTest, ExamplesAreDiscountedReturnsAsRewardRates) {
  // 8 steps at gamma 0.5 keep the first 8 - 5 = 3, each with its own
  // observation and (1 - gamma) / scale times the return over the episode.
  const std::vector<double> rewards = {2, 0, 1, 2, 0, 0, 1, 2};
  const at::Tensor observations = torch::arange(16, torch::kFloat).view({8, 2});
  const at::Tensor examples =
      ValueExamples(observations, torch::tensor(rewards, torch::kFloat), 0.5, /*reward_scale=*/2);
  ASSERT_EQ(examples.sizes(), (at::IntArrayRef{3, 3}));
  EXPECT_TRUE(torch::equal(examples.narrow(1, 0, 2), observations.narrow(0, 0, 3)));
  for (int t = 0; t < 3; ++t) {
    double ret = 0.0;
    for (int k = t; k < 8; ++k) ret += std::pow(0.5, k - t) * rewards[k];
    EXPECT_NEAR(examples[t][2].item<double>(), 0.5 * ret / 2.0, 1e-6) << "t = " << t;
  }
  // Shorter than the tail: nothing to train on; mismatched shapes are refused.
  EXPECT_EQ(ValueExamples(observations.narrow(0, 0, 5), torch::zeros({5}), 0.5, 1).size(0), 0);
  EXPECT_THROW(ValueExamples(observations, torch::zeros({7}), 0.5, 1), std::invalid_argument);
  EXPECT_THROW(ValueExamples(observations, torch::zeros({8}), 0.5, 0), std::invalid_argument);
}

// Episodes that hold the sign of their first feature and are paid 1 a step
// while it is positive, 0 otherwise: the critic must tell the two apart.
std::vector<at::Tensor> SignEpisodes(int episodes, uint64_t seed) {
  const at::Generator generator = at::detail::createCPUGenerator(seed);
  std::vector<at::Tensor> out;
  for (int e = 0; e < episodes; ++e) {
    at::Tensor observations = at::rand({60, 2}, generator) * 2 - 1;
    observations.select(1, 0).abs_().mul_(e % 2 == 0 ? 1.0 : -1.0);
    const at::Tensor rewards = (observations.select(1, 0) > 0).to(at::kFloat);
    out.push_back(ValueExamples(observations, rewards, 0.9, 1.0));
  }
  return out;
}

TEST(ValueModelTest, TrainingLearnsWhichStatesPay) {
  const std::vector<at::Tensor> train = SignEpisodes(20, 1), validation = SignEpisodes(4, 2);
  ValueModel model(SmallConfig(2), /*init_seed=*/3);
  const double before = ValueModelLoss(*model, validation);
  MlpTrainOptions options;
  options.steps = 300;
  options.batch_size = 64;
  TrainValueModel(*model, train, options);
  const double after = ValueModelLoss(*model, validation);
  // What is left is mostly the step at 0, which a smooth critic rounds off.
  EXPECT_LT(after, 0.25 * before);
  torch::NoGradGuard no_grad;
  // The episodes of a positive sign return 1 per step, rate 1 (up to the
  // tail's cut), the others 0.
  const at::Tensor paying = model->Forward(torch::tensor({{0.5f, 0.0f}}));
  const at::Tensor not_paying = model->Forward(torch::tensor({{-0.5f, 0.0f}}));
  EXPECT_GT(paying.item<double>(), 0.8);
  EXPECT_LT(not_paying.item<double>(), 0.2);
}

ValueModelInfo Info() {
  ValueModelInfo info;
  info.task = "pendulum_swingup";
  info.config = SmallConfig(3);
  info.action_repeat = 2;
  return info;
}

Normalizer Shifted() {
  return Normalizer(torch::tensor({1.0f, 0.0f, -1.0f}), torch::full({3}, 2.0f));
}

TEST(ValueModelTest, FileRoundTripKeepsValuesDiscountAndControlRate) {
  ValueModel model(SmallConfig(3), 4);
  model->eval();
  const std::string path = TempPath("good.pt");
  SaveValueModel(path, Info(), Shifted(), *model);
  const ValueCheckpoint loaded = LoadValueModel(path, {"pendulum_swingup", 3});
  EXPECT_EQ(loaded.info.action_repeat, 2);
  EXPECT_DOUBLE_EQ(loaded.info.config.discount, 0.9);
  const at::Tensor observations = torch::randn({5, 3});
  torch::NoGradGuard no_grad;
  // Value normalizes environment units with the stored statistics.
  EXPECT_TRUE(
      torch::equal(loaded.Value(observations), model->Forward(Shifted().Normalize(observations))));
}

TEST(ValueModelTest, WrongFilesGiveClearErrors) {
  ExpectLoadError(TempPath("missing.pt"), {}, "does not exist");
  ValueModel model(SmallConfig(3), 4);
  const std::string good = TempPath("pendulum.pt");
  SaveValueModel(good, Info(), Shifted(), *model);
  ExpectLoadError(good, {"reacher", 0}, "trained for task 'pendulum_swingup', not 'reacher'");
  ExpectLoadError(good, {"", 5}, "expected 5");

  const std::string transformer = TempPath("transformer.pt");
  testing::SaveTinyTransformer(transformer, TokenLayout{1, 2}, Shifted());
  ExpectLoadError(transformer, {}, "not a value model");
  EXPECT_THROW(LoadMlpCheckpoint(good), std::runtime_error);  // and the other way round

  // A flipped byte fails the checksum before anything is read.
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() / 2] ^= 0x20;
  const std::string corrupt = TempPath("corrupt.pt");
  std::ofstream(corrupt, std::ios::binary) << bytes;
  ExpectLoadError(corrupt, {}, "checksum");

  for (auto mismatch :
       {+[](ValueModelConfig& c) { c.discount = 0.5; }, +[](ValueModelConfig& c) { c.width = 16; },
        +[](ValueModelConfig& c) { c.hidden_layers = 3; }}) {
    ValueModelInfo mismatched = Info();
    mismatch(mismatched.config);
    EXPECT_THROW(SaveValueModel(TempPath("bad.pt"), mismatched, Shifted(), *model),
                 std::invalid_argument);
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
