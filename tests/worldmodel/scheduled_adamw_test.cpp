#include "scheduled_adamw.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "dfmpc/worldmodel/distiller.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/trainer.h"
#include "learning_rate.h"
#include "training_heap.h"

namespace dfmpc::worldmodel {
namespace {

std::string ValidationError(const OptimizerOptions& options) {
  try {
    options.Validate("Owner");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(OptimizerOptionsTest, ValidateNamesTheOwnerAndTheImpossibleSetting) {
  const std::pair<std::function<void(OptimizerOptions&)>, std::string> cases[] = {
      {[](OptimizerOptions& o) { o.steps = 0; }, "Owner: steps must be positive, got 0"},
      {[](OptimizerOptions& o) { o.batch_size = -2; },
       "Owner: batch size must be positive, got -2"},
      {[](OptimizerOptions& o) { o.learning_rate = 0; }, "Owner: learning rate must be positive"},
      {[](OptimizerOptions& o) { o.learning_rate = NAN; }, "Owner: learning rate must be positive"},
      {[](OptimizerOptions& o) { o.min_learning_rate_ratio = 1.5; },
       "Owner: min learning rate ratio must be in [0, 1]"},
      {[](OptimizerOptions& o) { o.warmup_steps = -1; },
       "Owner: warmup steps must be >= 0, got -1"},
      {[](OptimizerOptions& o) { o.weight_decay = -0.1; }, "Owner: weight decay must be >= 0"},
      {[](OptimizerOptions& o) { o.grad_clip = -1; },
       "Owner: gradient clip must be >= 0 (0: no clipping)"},
  };
  for (const auto& [change, message] : cases) {
    OptimizerOptions options;
    change(options);
    EXPECT_EQ(ValidationError(options), message);
  }
  EXPECT_EQ(ValidationError(OptimizerOptions()), "");
}

TEST(OptimizerOptionsTest, EveryRunsDefaultsAreValidAndItsOwn) {
  EXPECT_EQ(ValidationError(TrainerOptions()), "");
  EXPECT_EQ(ValidationError(DistillerOptions()), "");
  EXPECT_EQ(ValidationError(MlpTrainOptions()), "");
  EXPECT_EQ(ValidationError(FrameTrainOptions()), "");
  // The runs keep their own schedules: the transformer warms up and clips,
  // the MLPs and the frame tokenizer do neither.
  EXPECT_EQ(TrainerOptions().warmup_steps, 200);
  EXPECT_EQ(TrainerOptions().grad_clip, 1.0);
  EXPECT_EQ(DistillerOptions().learning_rate, 2e-4);
  EXPECT_EQ(MlpTrainOptions().batch_size, 256);
  EXPECT_EQ(MlpTrainOptions().grad_clip, 0.0);
  EXPECT_EQ(FrameTrainOptions().warmup_steps, 0);
}

// The rate AdamW holds after each step.
double CurrentRate(ScheduledAdamW& optimizer) {
  return static_cast<torch::optim::AdamWOptions&>(optimizer.adamw().param_groups()[0].options())
      .lr();
}

TEST(ScheduledAdamWTest, EachStepTakesItsScheduledRate) {
  OptimizerOptions options;
  options.steps = 10;
  options.warmup_steps = 4;
  options.learning_rate = 0.1;
  options.weight_decay = 0.0;
  at::Tensor weight = at::zeros({1}).requires_grad_(true);
  ScheduledAdamW optimizer({weight}, options);
  for (int step = 0; step < options.steps; ++step) {
    const double before = weight.item<double>();
    optimizer.Step(step, [&] { return (weight - 100.0).square().sum(); });
    const double expected =
        WarmupCosineLearningRate(step, 10, 4, 0.1, options.min_learning_rate_ratio);
    EXPECT_DOUBLE_EQ(CurrentRate(optimizer), expected) << "step " << step;
    EXPECT_DOUBLE_EQ(optimizer.LearningRate(step), expected);
    // Far from the minimum every AdamW step moves by about the rate.
    EXPECT_NEAR(weight.item<double>() - before, expected, 1e-3 * expected) << "step " << step;
  }
}

// The gradient's norm after a step of `options` on a loss whose gradient
// has norm 100.
double GradientNormAfterStep(const OptimizerOptions& options) {
  at::Tensor weight = at::zeros({4}).requires_grad_(true);
  ScheduledAdamW optimizer({weight}, options);
  optimizer.Step(0, [&] { return (weight * 50.0).sum(); });  // gradient 50 per entry
  return weight.grad().norm().item<double>();
}

TEST(ScheduledAdamWTest, ClipsTheGradientNormOnlyWhenAsked) {
  OptimizerOptions options;
  options.grad_clip = 2.0;
  EXPECT_NEAR(GradientNormAfterStep(options), 2.0, 1e-4);
  options.grad_clip = 0.0;
  EXPECT_NEAR(GradientNormAfterStep(options), 100.0, 1e-4);
}

TEST(ScheduledAdamWTest, ReportsTheLossAfterBackwardGives) {
  OptimizerOptions options;
  at::Tensor weight = at::ones({1}).requires_grad_(true);
  ScheduledAdamW optimizer({weight}, options);
  bool gradients_ready = false;
  const at::Tensor reported = optimizer.Step(
      0, [&] { return (3.0 * weight).sum(); },
      [&](const at::Tensor& loss) {
        gradients_ready = weight.grad().defined() && weight.grad().item<double>() == 3.0;
        return loss * 2.0;  // as a sum over two ranks would
      });
  EXPECT_TRUE(gradients_ready);
  EXPECT_DOUBLE_EQ(reported.item<double>(), 6.0);
}

// Bytes free inside the main heap: what the next allocations reuse
// without asking the kernel for fresh pages.
std::size_t FreeHeapBytes() {
#if defined(__GLIBC__)
  return mallinfo2().fordblks;
#else
  return 0;
#endif
}

TEST(ScheduledAdamWTest, TheHeapKeepsWhatATrainingStepFreesForTheNext) {
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "glibc's own allocator only";
#endif
  if (std::getenv("MALLOC_TOP_PAD_") != nullptr ||
      std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) {
    GTEST_SKIP() << "the user's malloc settings win";
  }
  at::Tensor weight = at::ones({1}).requires_grad_(true);
  const ScheduledAdamW optimizer({weight}, OptimizerOptions());
  // A step's activations: blocks above glibc's default mmap threshold and
  // below the training one, freed together at the step's end. Without the
  // settings they are mapped and unmapped one by one, or the heap's top
  // they came from is given back to the kernel as soon as they are free.
  constexpr std::size_t kBlock = std::size_t{4} << 20, kBlocks = 8;
  static_assert(kBlock < kTrainingMmapThreshold && kBlock * kBlocks < kTrainingHeapPad);
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < kBlocks; ++i) {
    char* volatile block = static_cast<char*>(std::malloc(kBlock));  // volatile: not elided
    block[0] = 1;
    blocks.push_back(block);
  }
  for (void* block : blocks) std::free(block);
  EXPECT_GE(FreeHeapBytes(), kBlock * kBlocks);
}

}  // namespace
}  // namespace dfmpc::worldmodel
