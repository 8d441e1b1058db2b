#include "dfmpc/worldmodel/frame_tokenizer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kSize = 16;

FrameTokenizerConfig TinyConfig() {
  FrameTokenizerConfig config;
  config.width = kSize;
  config.height = kSize;
  config.latent_dim = 8;
  config.channels = 4;
  return config;
}

// uint8 [count, 16, 16, 3] frames: a 6 x 6 square of a random colour at a
// random position on a dark grey background.
at::Tensor SquareFrames(int count, uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  at::Tensor frames = torch::full({count, kSize, kSize, 3}, 30, torch::kUInt8);
  const at::Tensor corners = torch::randint(kSize - 6 + 1, {count, 2}, generator, torch::kLong);
  const at::Tensor colours = torch::randint(80, 256, {count, 3}, generator, torch::kLong);
  for (int i = 0; i < count; ++i) {
    const int64_t row = corners[i][0].item<int64_t>(), col = corners[i][1].item<int64_t>();
    frames[i].slice(0, row, row + 6).slice(1, col, col + 6).copy_(colours[i].to(torch::kUInt8));
  }
  return frames;
}

FrameTrainOptions FastOptions() {
  FrameTrainOptions options;
  options.steps = 200;
  options.batch_size = 32;
  options.learning_rate = 3e-3;
  options.validate_every = 100;
  options.seed = 3;
  return options;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_frame_tokenizer_" + name;
}

FrameTokenizerInfo Info() {
  FrameTokenizerInfo info;
  info.task = "pendulum_swingup";
  info.config = TinyConfig();
  return info;
}

// Pixel MSE of `model`'s reconstructions of `frames`, without gradients.
double ReconstructionLoss(FrameAutoencoderImpl& model, const at::Tensor& frames) {
  torch::NoGradGuard no_grad;
  const at::Tensor pixels = FramesToPixels(frames);
  return torch::mse_loss(model.Reconstruct(pixels), pixels).item<double>();
}

void ExpectInvalidArgument(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no error, expected one with '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(FrameTokenizerTest, TrainingLowersValidationLossClearly) {
  FrameAutoencoder model(TinyConfig(), 1);
  const at::Tensor train = SquareFrames(512, 1), validation = SquareFrames(64, 2);
  const double before = ReconstructionLoss(*model, validation);
  int calls = 0;
  // The plain pixel MSE, whose drop this checks: here nearly every pixel
  // differs from the mean frame somewhere, so the foreground weighting would
  // only rescale the loss (it is for small objects on a static background).
  FrameTrainOptions options = FastOptions();
  options.foreground_weight = 0.0;
  const auto log = TrainFrameAutoencoder(*model, train, validation, options,
                                         [&](int step, double) { EXPECT_EQ(step, ++calls); });
  EXPECT_EQ(calls, 200);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log.front().step, 100);
  EXPECT_EQ(log.back().step, 200);
  EXPECT_FALSE(model->is_training());
  const double after = log.back().validation_loss;
  EXPECT_NEAR(after, ReconstructionLoss(*model, validation), 1e-5 * after);
  // Seeds 1 to 8 all end at 0.26 to 0.39 of the untrained loss (the
  // background alone is learnt by then); a model that does not learn stays
  // near 1.
  EXPECT_LT(after, 0.5 * before) << "before " << before << ", after " << after;
  EXPECT_GT(log.back().validation_psnr, log.front().validation_psnr - 0.5);
  EXPECT_GT(log.back().frames_per_second, 0.0);
}

TEST(FrameTokenizerTest, MeanFrameIsThePerPixelMean) {
  at::Tensor frames = torch::zeros({2, 16, 16, 3}, torch::kUInt8);
  frames[0].fill_(255);
  frames[1][3][5][2] = 51;
  const at::Tensor mean = MeanFramePixels(frames);
  ASSERT_EQ(mean.sizes(), (at::IntArrayRef{3, 16, 16}));
  EXPECT_FLOAT_EQ(mean[0][0][0].item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(mean[2][3][5].item<float>(), (255.0f + 51.0f) / 2.0f / 255.0f);
  EXPECT_THROW(MeanFramePixels(frames.narrow(0, 0, 0)), std::invalid_argument);
}

TEST(FrameTokenizerTest, SameSeedGivesIdenticalTrainedWeights) {
  const at::Tensor train = SquareFrames(64, 1), validation = SquareFrames(8, 2);
  FrameTrainOptions options = FastOptions();
  options.steps = 5;
  FrameAutoencoder first(TinyConfig(), 4), second(TinyConfig(), 4);
  TrainFrameAutoencoder(*first, train, validation, options);
  torch::manual_seed(99);  // the global generator plays no part
  TrainFrameAutoencoder(*second, train, validation, options);
  const auto a = first->parameters(), b = second->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
  EXPECT_FALSE(torch::equal(FrameAutoencoder(TinyConfig(), 5)->parameters()[0],
                            FrameAutoencoder(TinyConfig(), 4)->parameters()[0]));
}

TEST(FrameTokenizerTest, EncodeAndDecodeHaveTheDocumentedShapesAndRanges) {
  FrameAutoencoder model(TinyConfig(), 1);
  model->eval();
  const at::Tensor latents = model->Encode(SquareFrames(5, 1));
  EXPECT_EQ(latents.sizes(), (at::IntArrayRef{5, 8}));
  EXPECT_EQ(latents.scalar_type(), torch::kFloat);

  const at::Tensor decoded = model->Decode(torch::randn({5, 8}) * 10);
  EXPECT_EQ(decoded.sizes(), (at::IntArrayRef{5, kSize, kSize, 3}));
  EXPECT_EQ(decoded.scalar_type(), torch::kFloat);
  EXPECT_GE(decoded.min().item<float>(), 0.0f);
  EXPECT_LE(decoded.max().item<float>(), 1.0f);

  const at::Tensor bytes = model->DecodeToBytes(latents);
  EXPECT_EQ(bytes.sizes(), (at::IntArrayRef{5, kSize, kSize, 3}));
  EXPECT_EQ(bytes.scalar_type(), torch::kUInt8);
  EXPECT_TRUE(torch::equal(bytes, (model->Decode(latents) * 255).round().to(torch::kUInt8)));
}

TEST(FrameTokenizerTest, PixelConversionsRoundTrip) {
  const at::Tensor frames = SquareFrames(3, 7);
  const at::Tensor pixels = FramesToPixels(frames);
  EXPECT_EQ(pixels.sizes(), (at::IntArrayRef{3, 3, kSize, kSize}));
  EXPECT_FLOAT_EQ(pixels[0][1][0][0].item<float>(), 30.0f / 255.0f);
  EXPECT_TRUE(torch::equal(PixelsToFrames(pixels), frames));
}

TEST(FrameTokenizerTest, WrongFramesNameTheExpectedShape) {
  FrameAutoencoder model(TinyConfig(), 1);
  for (const at::Tensor& bad :
       {torch::zeros({2, 32, 32, 3}, torch::kUInt8), torch::zeros({2, kSize, kSize, 3}),
        torch::zeros({2, kSize, kSize, 4}, torch::kUInt8),
        torch::zeros({kSize, kSize, 3}, torch::kUInt8)}) {
    ExpectInvalidArgument([&] { model->Encode(bad); }, "frames must be uint8 [N, 16, 16, 3]");
  }
  ExpectInvalidArgument([&] { model->Decode(torch::zeros({2, 7})); }, "latents must be [N, 8]");
  const at::Tensor good = SquareFrames(4, 1);
  ExpectInvalidArgument(
      [&] {
        TrainFrameAutoencoder(*model, torch::zeros({4, 32, 32, 3}, torch::kUInt8), good,
                              FastOptions());
      },
      "frames must be uint8 [N, 16, 16, 3]");
  ExpectInvalidArgument(
      [&] { TrainFrameAutoencoder(*model, good, good.slice(0, 0, 0), FastOptions()); },
      "no validation frames");
}

TEST(FrameTokenizerTest, SaveLoadRoundTripGivesIdenticalCodes) {
  FrameAutoencoder model(TinyConfig(), 2);
  model->eval();
  FrameTokenizerInfo info = Info();
  info.notes = "round trip";
  const std::string path = TempPath("round_trip.pt");
  SaveFrameTokenizer(path, info, *model);
  FrameTokenizerCheckpoint loaded = LoadFrameTokenizer(path, {"pendulum_swingup", 0});
  EXPECT_EQ(loaded.info.task, "pendulum_swingup");
  EXPECT_EQ(loaded.info.notes, "round trip");
  EXPECT_EQ(loaded.info.library_version, LibraryVersion());
  EXPECT_EQ(loaded.info.config.latent_dim, 8);
  EXPECT_EQ(loaded.info.config.channels, 4);
  EXPECT_EQ(loaded.info.config.width, kSize);
  EXPECT_FALSE(loaded.model->is_training());
  const at::Tensor frames = SquareFrames(6, 3);
  const at::Tensor latents = model->Encode(frames);
  EXPECT_TRUE(torch::equal(loaded.model->Encode(frames), latents));
  EXPECT_TRUE(torch::equal(loaded.model->Decode(latents), model->Decode(latents)));

  FrameTokenizerInfo other = info;
  other.config.latent_dim = 9;
  EXPECT_THROW(SaveFrameTokenizer(TempPath("never.pt"), other, *model), std::invalid_argument);
}

TEST(FrameTokenizerTest, BadFilesGiveClearErrors) {
  auto expect_error = [](const std::string& path, const CheckpointExpectation& expect,
                         const std::string& needle) {
    try {
      LoadFrameTokenizer(path, expect);
      ADD_FAILURE() << "no error for " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  expect_error(TempPath("missing.pt"), {}, "does not exist");
  const std::string garbage = TempPath("garbage.pt");
  std::ofstream(garbage) << "not a model";
  expect_error(garbage, {}, "checksum mismatch: the file is corrupt");

  FrameAutoencoder model(TinyConfig(), 1);
  const std::string good = TempPath("good.pt");
  SaveFrameTokenizer(good, Info(), *model);
  expect_error(good, {"reacher", 0}, "trained for task 'pendulum_swingup', not 'reacher'");

  const std::string transformer = TempPath("transformer.pt");
  testing::SaveTinyTransformer(transformer, TokenLayout{1, 2},
                               Normalizer(torch::zeros({3}), torch::ones({3})));
  expect_error(transformer, {}, "not a dfmpc frame tokenizer (format 'dfmpc-model')");
}

TEST(FrameTokenizerTest, PsnrMatchesHandComputedValues) {
  const at::Tensor reference = SquareFrames(2, 1).clamp(0, 250);
  EXPECT_EQ(FramePsnr(reference, reference), std::numeric_limits<double>::infinity());
  for (int d : {1, 5, 30}) {
    EXPECT_NEAR(FramePsnr(reference + d, reference), 20.0 * std::log10(255.0 / d), 1e-9) << d;
  }
  // Off by 4 in half the frames: MSE 8.
  at::Tensor half = reference.clone();
  half[0] += 4;
  EXPECT_NEAR(FramePsnr(half, reference), 10.0 * std::log10(255.0 * 255.0 / 8.0), 1e-9);
  EXPECT_THROW(FramePsnr(reference, reference.slice(0, 0, 1)), std::invalid_argument);
  EXPECT_THROW(FramePsnr(reference.to(torch::kFloat), reference), std::invalid_argument);
}

TEST(FrameTokenizerTest, ConfigValidateRejectsImpossibleSizes) {
  auto rejected = [](void (*change)(FrameTokenizerConfig&), const std::string& needle) {
    FrameTokenizerConfig config;
    change(config);
    ExpectInvalidArgument([&] { config.Validate(); }, needle);
    ExpectInvalidArgument([&] { FrameAutoencoder model(config); }, needle);
  };
  rejected([](FrameTokenizerConfig& c) { c.width = 40; },
           "width must be a positive multiple of 16, not 40");
  rejected([](FrameTokenizerConfig& c) { c.height = 0; },
           "height must be a positive multiple of 16, not 0");
  rejected([](FrameTokenizerConfig& c) { c.latent_dim = 0; }, "latent_dim must be >= 1, not 0");
  rejected([](FrameTokenizerConfig& c) { c.channels = 0; }, "channels must be >= 1, not 0");
  EXPECT_NO_THROW(TinyConfig().Validate());
  FrameTokenizerConfig wide;
  wide.width = 96;
  wide.height = 32;
  EXPECT_EQ(FrameAutoencoder(wide)->Encode(torch::zeros({1, 32, 96, 3}, torch::kUInt8)).size(1),
            16);
}

TEST(FrameTokenizerTest, TrainOptionsValidateRejectsImpossibleOptions) {
  auto rejected = [](void (*change)(FrameTrainOptions&), const std::string& needle) {
    FrameTrainOptions options;
    change(options);
    ExpectInvalidArgument([&] { options.Validate(); }, needle);
  };
  rejected([](FrameTrainOptions& o) { o.steps = 0; }, "steps must be positive");
  rejected([](FrameTrainOptions& o) { o.batch_size = 0; }, "batch size must be positive");
  rejected([](FrameTrainOptions& o) { o.learning_rate = 0; }, "learning rate must be positive");
  rejected([](FrameTrainOptions& o) { o.validate_every = 0; }, "validate_every must be positive");
  EXPECT_NO_THROW(FrameTrainOptions().Validate());
}

}  // namespace
}  // namespace dfmpc::worldmodel
