// The planner on a GPU: CUDA graphs change no action, the GPU follows the
// CPU, and models load onto the device the options name.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <memory>
#include <stdexcept>

#include "cuda_testing.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/kv_cache.h"

namespace dfmpc::planner {
namespace {

using dfmpc::testing::PendulumObservation;
using dfmpc::testing::ShippedModel;

// The shipped model with its task's tuned options and `overrides`.
std::unique_ptr<Planner> PendulumPlanner(PlannerOverrides overrides, const std::string& device) {
  overrides.Set("device", device);
  return Planner::FromFile(ShippedModel("pendulum_swingup"), overrides);
}

TEST(CudaPlannerTest, FromFileLoadsOntoTheCpuByDefault) {
  const auto planner = PendulumPlanner({}, "");
  EXPECT_TRUE(planner->context_cache().options().device.is_cpu());
}

TEST(CudaPlannerTest, DevicesThatAreMissingOrNotTheModelsAreRefused) {
  EXPECT_THROW(PendulumPlanner({}, "cuda:9"), std::invalid_argument);
  // A checkpoint loaded onto the CPU planned on CUDA: a mismatch on a GPU
  // machine, a missing device elsewhere. FromFile is the way to move it.
  const worldmodel::Checkpoint checkpoint =
      worldmodel::LoadCheckpoint(ShippedModel("pendulum_swingup"));
  PlannerOptions options;
  options.device = "cuda";
  EXPECT_THROW(Planner(checkpoint, MakeTaskCost("pendulum_swingup"), options),
               std::invalid_argument);
  options.device = "tpu";
  EXPECT_THROW(options.Validate(), std::invalid_argument);
}

TEST(CudaPlannerTest, CudaGraphsReplayTheWarmStepWithoutChangingAnAction) {
  DFMPC_SKIP_WITHOUT_CUDA();
  const auto eager = PendulumPlanner({{"cuda_graphs", false}}, "cuda");
  const auto graphed = PendulumPlanner({{"cuda_graphs", true}}, "cuda");
  eager->Reset(PendulumObservation(0));
  graphed->Reset(PendulumObservation(0));
  int replays = 0;
  // Past the 31 steps that fill the context ring, so that shapes repeat.
  for (int t = 0; t < 60; ++t) {
    const Eigen::VectorXd a = eager->Act(PendulumObservation(t));
    const Eigen::VectorXd b = graphed->Act(PendulumObservation(t));
    ASSERT_LE((a - b).cwiseAbs().maxCoeff(), 1e-5) << "step " << t;
    EXPECT_EQ(eager->last_step().graph_replays, 0);
    replays += graphed->last_step().graph_replays;
  }
  EXPECT_GE(replays, 20);
}

TEST(CudaPlannerTest, TheGpuFollowsTheCpu) {
  DFMPC_SKIP_WITHOUT_CUDA();
  // One candidate: no best-of-N choice that rounding could flip.
  const auto cpu = PendulumPlanner({{"candidates", 1}}, "cpu");
  const auto gpu = PendulumPlanner({{"candidates", 1}}, "cuda");
  cpu->Reset(PendulumObservation(0));
  gpu->Reset(PendulumObservation(0));
  for (int t = 0; t < 10; ++t) {
    const Eigen::VectorXd a = cpu->Act(PendulumObservation(t));
    const Eigen::VectorXd b = gpu->Act(PendulumObservation(t));
    // Float rounding differs between the devices' kernels, and 16 denoising
    // levels carry it into the action; 1e-3 of an action in [-1, 1].
    EXPECT_LE((a - b).cwiseAbs().maxCoeff(), 1e-3) << "step " << t;
  }
}

}  // namespace
}  // namespace dfmpc::planner
