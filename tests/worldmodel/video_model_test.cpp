// Video model files: tokenizer and transformer saved together, halves that
// do not fit refused, and each kind of model file refused where the other
// is expected, with a message that says which command wants which.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"
#include "dfmpc/worldmodel/video_model.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kLatent = 3;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_video_model_" + name;
}

ModelInfo VideoInfo(int latent = kLatent) {
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = TokenLayout{1, latent, /*observation_deltas=*/true};
  info.config = testing::TinyConfig(info.layout.token_dim());
  info.config.action_input_dim = 1;
  info.train_window = 16;
  return info;
}

Normalizer VideoNormalizer(int dim) {
  return Normalizer(torch::linspace(-1, 1, dim), torch::linspace(0.5, 2, dim));
}

FrameTokenizerCheckpoint TinyTokenizer(const std::string& task = "pendulum_swingup") {
  FrameTokenizerCheckpoint tokenizer;
  tokenizer.info.task = task;
  tokenizer.info.config = FrameTokenizerConfig{16, 16, kLatent, 2};
  tokenizer.model = FrameAutoencoder(tokenizer.info.config, 5);
  tokenizer.model->eval();
  return tokenizer;
}

std::string LoadError(const std::function<void()>& load) {
  try {
    load();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(VideoModelTest, RoundTripKeepsBothHalves) {
  torch::NoGradGuard no_grad;
  const ModelInfo info = VideoInfo();
  DfTransformer model(info.config, 3);
  model->eval();
  FrameTokenizerCheckpoint tokenizer = TinyTokenizer();
  const std::string path = TempPath("roundtrip.pt");
  SaveVideoModel(path, info, VideoNormalizer(info.layout.token_dim()), *model, tokenizer);

  ASSERT_TRUE(IsVideoModelFile(path));
  VideoModel loaded = LoadVideoModel(path, {"pendulum_swingup", info.layout.token_dim()});
  EXPECT_EQ(loaded.world.info.task, "pendulum_swingup");
  EXPECT_EQ(loaded.world.info.layout.observation_dim, kLatent);
  EXPECT_EQ(loaded.tokenizer.info.config.latent_dim, kLatent);
  const torch::Tensor tokens = torch::randn({1, 6, info.layout.token_dim()});
  const torch::Tensor steps = torch::randint(0, 1000, {6}, torch::kLong);
  EXPECT_TRUE(torch::equal(model->Forward(tokens, steps, nullptr),
                           loaded.world.model->Forward(tokens, steps, nullptr)));
  const torch::Tensor frames = torch::randint(0, 256, {2, 16, 16, 3}, torch::kByte);
  EXPECT_TRUE(torch::equal(tokenizer.model->Encode(frames), loaded.tokenizer.model->Encode(frames)));
  EXPECT_NE(DescribeVideoModel(loaded).find("16x16 RGB frames -> 3 latent"), std::string::npos);
}

TEST(VideoModelTest, HalvesThatDoNotFitAreRefused) {
  const ModelInfo info = VideoInfo(/*latent=*/4);
  DfTransformer model(info.config, 3);
  EXPECT_THROW(SaveVideoModel(TempPath("mismatch.pt"), info,
                              VideoNormalizer(info.layout.token_dim()), *model, TinyTokenizer()),
               std::invalid_argument);
}

TEST(VideoModelTest, EachKindIsRefusedWhereTheOtherIsExpected) {
  const ModelInfo info = VideoInfo();
  DfTransformer model(info.config, 3);
  const std::string video = TempPath("video.pt"), state = TempPath("state.pt");
  SaveVideoModel(video, info, VideoNormalizer(info.layout.token_dim()), *model, TinyTokenizer());
  SaveCheckpoint(state, info, VideoNormalizer(info.layout.token_dim()), *model);

  const std::string as_state = LoadError([&] { LoadCheckpoint(video); });
  EXPECT_NE(as_state.find("a video model (dfmpc-video-model) is for `dfmpc rollout`"),
            std::string::npos)
      << as_state;
  const std::string as_video = LoadError([&] { LoadVideoModel(state); });
  EXPECT_NE(as_video.find("rollout needs a video model from `dfmpc train --tokenizer`"),
            std::string::npos)
      << as_video;
  EXPECT_FALSE(IsVideoModelFile(state));
  const std::string other_task = LoadError([&] { LoadVideoModel(video, {"cartpole_swingup", 0}); });
  EXPECT_NE(other_task.find("trained for task 'pendulum_swingup', not 'cartpole_swingup'"),
            std::string::npos)
      << other_task;
}

TEST(VideoModelTest, CorruptFileFailsTheChecksum) {
  const ModelInfo info = VideoInfo();
  DfTransformer model(info.config, 3);
  const std::string path = TempPath("corrupt.pt");
  SaveVideoModel(path, info, VideoNormalizer(info.layout.token_dim()), *model, TinyTokenizer());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
  std::ofstream(path, std::ios::binary) << bytes;
  const std::string error = LoadError([&] { LoadVideoModel(path); });
  EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << error;
  EXPECT_FALSE(IsVideoModelFile(path));
}

}  // namespace
}  // namespace dfmpc::worldmodel
