// Library code changes nothing outside its own objects: building and training
// models draws from their own seeded generators, never from the process-wide
// one, whose state a caller may rely on.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <string>
#include <vector>

#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/trainer.h"
#include "dfmpc/worldmodel/transformer.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

at::Tensor GlobalState() { return at::detail::getDefaultCPUGenerator().get_state(); }

MlpDynamicsConfig SmallMlpConfig() {
  MlpDynamicsConfig config;
  config.layout.action_dim = 1;
  config.layout.observation_dim = 3;
  config.width = 16;
  return config;
}

// True when the two modules' parameters are equal, one by one.
bool SameParameters(const torch::nn::Module& a, const torch::nn::Module& b) {
  const auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!torch::equal(pa[i], pb[i])) return false;
  }
  return pa.size() == pb.size();
}

TEST(GlobalGeneratorTest, InitialWeightsFollowTheInitSeedAlone) {
  torch::manual_seed(1);
  const DfTransformer transformer(testing::TinyConfig(), 7);
  const MlpDynamics mlp(SmallMlpConfig(), 7);
  torch::manual_seed(2);  // another global state: no effect
  EXPECT_TRUE(SameParameters(*transformer, *DfTransformer(testing::TinyConfig(), 7)));
  EXPECT_TRUE(SameParameters(*mlp, *MlpDynamics(SmallMlpConfig(), 7)));
  EXPECT_FALSE(SameParameters(*transformer, *DfTransformer(testing::TinyConfig(), 8)));
  EXPECT_FALSE(SameParameters(*mlp, *MlpDynamics(SmallMlpConfig(), 8)));
}

TEST(GlobalGeneratorTest, BuildingAndTrainingModelsLeaveItsStateAlone) {
  torch::manual_seed(42);
  std::vector<at::Tensor> sequences;
  for (int i = 0; i < 3; ++i) sequences.push_back(torch::randn({20, 4}));
  const at::Tensor before = GlobalState();

  const DfTransformer transformer(testing::TinyConfig(4), 3);
  MlpDynamics mlp(SmallMlpConfig(), 3);
  EXPECT_TRUE(torch::equal(before, GlobalState())) << "model construction moved it";

  TrainerOptions options;
  options.steps = 2;
  options.batch_size = 2;
  options.window = 8;
  options.validate_every = 1;
  options.validation_windows = 2;
  options.seed = 3;
  const NoiseSchedule schedule;
  Trainer trainer(testing::TinyConfig(4), schedule, options, sequences, sequences);
  trainer.Run(::testing::TempDir() + "/dfmpc_global_generator.state", false, nullptr, nullptr);
  MlpTrainOptions mlp_options;
  mlp_options.steps = 2;
  mlp_options.batch_size = 4;
  TrainMlpDynamics(*mlp, sequences, mlp_options);
  EXPECT_TRUE(torch::equal(before, GlobalState())) << "training moved it";
}

}  // namespace
}  // namespace dfmpc::worldmodel
