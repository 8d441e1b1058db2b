// The check between transformer blocks (dfmpc/worldmodel/between_blocks.h):
// run before each block, scoped and per thread, and a call it
// stops leaves nothing behind that changes the next call.
#include "dfmpc/worldmodel/between_blocks.h"

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <functional>
#include <stdexcept>
#include <thread>

#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kDepth = 4;

DfTransformer DeepTinyModel() {
  TransformerConfig config = testing::TinyConfig();
  config.depth = kDepth;
  DfTransformer model(config, /*init_seed=*/3);
  model->eval();
  return model;
}

at::Tensor Call(DfTransformer& model) {
  const at::Tensor tokens = torch::linspace(-1.0, 1.0, 2 * 6 * 5).view({2, 6, 5});
  const at::Tensor steps = torch::arange(6, torch::kLong) * 100;
  const c10::InferenceMode inference;
  return model->Forward(tokens, steps, nullptr).clone();
}

TEST(BetweenBlocksTest, TheCheckRunsBeforeEveryBlock) {
  DfTransformer model = DeepTinyModel();
  int checks = 0;
  const std::function<void()> count = [&checks] { ++checks; };
  {
    const BetweenBlocks scope(&count);
    Call(model);
    EXPECT_EQ(checks, kDepth);
    {
      const BetweenBlocks none(nullptr);  // a nested scope without a check
      Call(model);
      EXPECT_EQ(checks, kDepth);
    }
    std::thread other([&model] { Call(model); });  // another thread's calls
    other.join();
    EXPECT_EQ(checks, kDepth);
    Call(model);  // the outer check is back
    EXPECT_EQ(checks, 2 * (kDepth));
  }
  Call(model);
  EXPECT_EQ(checks, 2 * (kDepth));
}

TEST(BetweenBlocksTest, AThrowingCheckStopsTheCallAndTheNextCallIsUnchanged) {
  DfTransformer model = DeepTinyModel();
  const at::Tensor expected = Call(model);
  for (int stop_at = 1; stop_at <= kDepth; ++stop_at) {
    int checks = 0;
    const std::function<void()> stop = [&] {
      if (++checks == stop_at) throw std::runtime_error("stop");
    };
    {
      const BetweenBlocks scope(&stop);
      EXPECT_THROW(Call(model), std::runtime_error);
      EXPECT_EQ(checks, stop_at);
    }
    EXPECT_TRUE(at::equal(Call(model), expected)) << "after a stop before block " << stop_at;
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
