// The denoiser's clean estimates, which feed candidate scoring, guidance
// and plan(), on the shipped pendulum model.
#include "plan_denoiser.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

// One call over three tokens at levels 1, 2, 3: tokens 0 and 2 move down a
// level, token 1 moves to `middle_after` (2: it stays). Returns the clean
// estimates after the call.
at::Tensor CleanEstimatesAfterOneCall(int middle_after) {
  worldmodel::Checkpoint checkpoint = Pendulum();  // shares the weights
  const int levels = 4;
  worldmodel::SchedulingMatrix program(2, 3, levels);
  const int before[3] = {1, 2, 3}, after[3] = {0, middle_after, 2};
  for (int t = 0; t < 3; ++t) {
    program.set_level(0, t, before[t]);
    program.set_level(1, t, after[t]);
  }
  const worldmodel::NoiseSchedule schedule(checkpoint.info.num_timesteps, checkpoint.info.beta);
  const PlanDenoiser denoiser(*checkpoint.model, schedule,
                              DenoiseOptions{levels, checkpoint.info.prediction, 0.0, 0.0});
  worldmodel::KvCacheOptions cache_options = checkpoint.model->CacheOptions();
  cache_options.capacity = 4;
  cache_options.scratch_capacity = 3;
  worldmodel::KvCache cache(cache_options);
  PlanBatch plan;
  torch::manual_seed(0);
  plan.tokens = torch::randn({1, 3, checkpoint.info.layout.token_dim()});
  plan.clean_estimate = torch::zeros_like(plan.tokens);
  at::Generator generator = at::detail::createCPUGenerator(0);
  torch::NoGradGuard no_grad;
  denoiser.Run(program, plan, cache, generator, nullptr,
               /*newest_real=*/at::Tensor());
  EXPECT_EQ(plan.estimated, 3);
  return plan.clean_estimate;
}

TEST(PlanDenoiserTest, ATokenThatStaysPutGetsTheCleanEstimateOfItsLevel) {
  // The model sees the same window either way; only whether token 1 takes
  // a DDIM step differs, which must not change what its clean value is
  // estimated to be (it once used alpha-bar 0.5 instead of its level's).
  const at::Tensor staying = CleanEstimatesAfterOneCall(2);
  const at::Tensor moving = CleanEstimatesAfterOneCall(1);
  EXPECT_TRUE(torch::equal(staying, moving))
      << "max difference " << (staying - moving).abs().max().item<double>();
}

}  // namespace
}  // namespace dfmpc::planner
