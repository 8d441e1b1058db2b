#include "dfmpc/worldmodel/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/tokens.h"
#include "model_archive.h"
#include "tiny_model.h"

namespace dfmpc::worldmodel {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_checkpoint_" + name;
}

ModelInfo TinyInfo() {
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = TokenLayout{1, 2, /*observation_deltas=*/true};
  info.config = testing::TinyConfig(5);
  info.train_window = 16;
  return info;
}

Normalizer TinyNormalizer() {
  return Normalizer(torch::tensor({0.1f, -0.2f, 0.3f, 0.0f, 2.0f}),
                    torch::tensor({1.0f, 2.0f, 0.5f, 1.5f, 3.0f}));
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A torch archive as a model file of this format would hold it, with a valid
// checksum: what gets past the checksum to the checks behind it.
void SaveWithChecksum(torch::serialize::OutputArchive& archive, const std::string& path) {
  std::ostringstream bytes;
  archive.save_to(bytes);
  WriteBytes(path, WithChecksum(bytes.str()));
}

// Expects LoadCheckpoint to fail with a message containing `needle`.
void ExpectLoadError(const std::string& path, const std::string& needle,
                     const CheckpointExpectation& expect = {}) {
  try {
    LoadCheckpoint(path, expect);
    ADD_FAILURE() << "loading " << path << " did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TokensTest, EpisodeTokensBundlePreviousActionAndObservation) {
  const auto observations = torch::tensor({{0.f, 1.f}, {2.f, 4.f}, {3.f, 9.f}});  // o_0..o_2
  const auto actions = torch::tensor({{7.f}, {8.f}});                            // a_0, a_1
  const TokenLayout plain{1, 2, false}, with_deltas{1, 2, true};
  EXPECT_TRUE(torch::equal(EpisodeTokens(plain, observations, actions),
                           torch::tensor({{0.f, 0.f, 1.f}, {7.f, 2.f, 4.f}, {8.f, 3.f, 9.f}})));
  const auto tokens = EpisodeTokens(with_deltas, observations, actions);
  EXPECT_TRUE(torch::equal(tokens, torch::tensor({{0.f, 0.f, 1.f, 0.f, 0.f},
                                                   {7.f, 2.f, 4.f, 2.f, 3.f},
                                                   {8.f, 3.f, 9.f, 1.f, 5.f}})));
  EXPECT_EQ(with_deltas.token_dim(), 5);
  EXPECT_THROW(EpisodeTokens(plain, observations, torch::zeros({3, 1})), std::invalid_argument);
  EXPECT_THROW(EpisodeTokens(with_deltas, observations.narrow(1, 0, 1), actions),
               std::invalid_argument);
}

TEST(TokensTest, ObservationsOfGeneratedTokens) {
  const auto observations = torch::tensor({{0.f, 1.f}, {2.f, 4.f}, {3.f, 9.f}});
  const auto actions = torch::tensor({{7.f}, {8.f}});
  const TokenLayout plain{1, 2, false}, with_deltas{1, 2, true};
  const auto last = observations.narrow(0, 0, 1);  // [1, obs]: the observation before
  // Tokens 1 and 2 as a batch of one: both layouts give back o_1 and o_2.
  for (const TokenLayout& layout : {plain, with_deltas}) {
    const auto future = EpisodeTokens(layout, observations, actions).narrow(0, 1, 2).unsqueeze(0);
    EXPECT_TRUE(torch::equal(TokenObservations(layout, future, last),
                             observations.narrow(0, 1, 2).unsqueeze(0)));
  }
  // With changes, the absolute features are ignored in favour of the sum.
  auto future = EpisodeTokens(with_deltas, observations, actions).narrow(0, 1, 2).unsqueeze(0);
  future.narrow(2, 1, 2).fill_(100.f);
  EXPECT_TRUE(torch::equal(TokenObservations(with_deltas, future, last),
                           observations.narrow(0, 1, 2).unsqueeze(0)));
}

TEST(TokensTest, NormalizerFitsAndRoundTrips) {
  torch::manual_seed(0);
  auto a = torch::randn({50, 3}) * 4 + 2;
  a.select(1, 2).fill_(5.0);  // a constant feature
  const auto b = torch::randn({30, 3});
  const Normalizer normalizer = Normalizer::Fit({a, b}, 0.01);
  const auto all = torch::cat({a, b});
  EXPECT_TRUE(torch::allclose(normalizer.mean(), all.mean(0), 1e-5, 1e-5));
  EXPECT_NEAR(normalizer.scale()[0].item<double>(), all.select(1, 0).std().item<double>(), 1e-4);
  EXPECT_GE(normalizer.scale()[2].item<double>(), 0.01 - 1e-9);
  EXPECT_TRUE(torch::allclose(normalizer.Denormalize(normalizer.Normalize(a)), a, 1e-5, 1e-5));
  const auto normalized = normalizer.Normalize(all);
  EXPECT_NEAR(normalized.select(1, 0).mean().item<double>(), 0.0, 1e-5);
  EXPECT_THROW(Normalizer(torch::zeros({3}), torch::zeros({3})), std::invalid_argument);
}

TEST(CheckpointTest, RoundTripGivesIdenticalOutputs) {
  DfTransformer model = testing::TinyModel(5);
  const std::string path = TempPath("roundtrip.pt");
  ModelInfo info = TinyInfo();
  info.action_repeat = 4;
  info.sampling_levels = 8;
  SaveCheckpoint(path, info, TinyNormalizer(), *model);
  Checkpoint loaded = LoadCheckpoint(path, {"pendulum_swingup", 5});
  const auto x = torch::randn({2, 6, 5});
  const auto steps = torch::tensor({-1, -1, 10, 200, 999, 500}, torch::kLong);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(model->Forward(x, steps, nullptr),
                           loaded.model->Forward(x, steps, nullptr)));
  EXPECT_TRUE(torch::equal(loaded.normalizer.scale(), TinyNormalizer().scale()));
  EXPECT_EQ(loaded.info.task, "pendulum_swingup");
  EXPECT_EQ(loaded.info.layout.action_dim, 1);
  EXPECT_TRUE(loaded.info.layout.observation_deltas);
  EXPECT_EQ(loaded.info.train_window, 16);
  EXPECT_EQ(loaded.info.action_repeat, 4);
  EXPECT_EQ(loaded.info.sampling_levels, 8);
  EXPECT_NE(DescribeCheckpoint(loaded).find("K = 8 (distilled)"), std::string::npos);
  EXPECT_EQ(loaded.info.library_version, LibraryVersion());
  EXPECT_NE(DescribeCheckpoint(loaded).find("pendulum_swingup"), std::string::npos);
}

TEST(CheckpointTest, BadCheckpointsAreClearErrors) {
  DfTransformer model = testing::TinyModel(5);
  const std::string good = TempPath("good.pt");
  SaveCheckpoint(good, TinyInfo(), TinyNormalizer(), *model);

  ExpectLoadError(TempPath("does_not_exist.pt"), "does not exist");
  ExpectLoadError(good, "trained for task 'pendulum_swingup', not 'reacher'", {"reacher", 0});
  ExpectLoadError(good, "token dimension 5, expected 7", {"", 7});

  const std::string truncated = TempPath("truncated.pt");
  std::filesystem::copy_file(good, truncated,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(good) / 2);
  ExpectLoadError(truncated, "checksum mismatch: the file is corrupt");

  const std::string text = TempPath("text.pt");
  std::ofstream(text) << "hello";
  ExpectLoadError(text, "checksum mismatch: the file is corrupt");

  // A file of format version 1 (a bare torch archive) has no checksum.
  const std::string version1 = TempPath("version1.pt");
  torch::serialize::OutputArchive bare;
  bare.write("metadata",
             c10::IValue(std::string(R"({"format": "dfmpc-model", "format_version": 1})")));
  bare.save_to(version1);
  ExpectLoadError(version1, "files written before format version 2 have none");

  // Past the checksum: a valid archive that is no dfmpc model.
  const std::string zip_text = TempPath("zip_text.pt");
  WriteBytes(zip_text, WithChecksum("hello"));
  ExpectLoadError(zip_text, "truncated, corrupt or not a dfmpc model");

  const std::string newer = TempPath("newer.pt");
  torch::serialize::OutputArchive archive;
  archive.write("metadata", c10::IValue(std::string(
                                R"({"format": "dfmpc-model", "format_version": 99})")));
  SaveWithChecksum(archive, newer);
  ExpectLoadError(newer, "format version 99");

  const std::string foreign = TempPath("foreign.pt");
  torch::serialize::OutputArchive other;
  other.write("weights", torch::zeros({3}));
  SaveWithChecksum(other, foreign);
  ExpectLoadError(foreign, "not a dfmpc model");
}

// Every flipped byte, truncation or appended byte is refused before the
// archive is parsed, wherever it lands (weights included, which the archive
// itself does not check).
TEST(CheckpointTest, CorruptFilesFailTheChecksum) {
  DfTransformer model = testing::TinyModel(5);
  const std::string good = TempPath("checksummed.pt");
  SaveCheckpoint(good, TinyInfo(), TinyNormalizer(), *model);
  const std::string bytes = ReadBytes(good);
  ASSERT_GT(bytes.size(), 1000u);
  const std::string bad = TempPath("corrupt.pt");
  std::mt19937 random(3);
  std::uniform_int_distribution<std::size_t> position(0, bytes.size() - 1);
  std::vector<std::size_t> flips{0, bytes.size() / 2, bytes.size() - 1};
  for (int i = 0; i < 40; ++i) flips.push_back(position(random));
  for (const std::size_t at : flips) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    WriteBytes(bad, flipped);
    SCOPED_TRACE("byte " + std::to_string(at) + " flipped");
    ExpectLoadError(bad, "checksum mismatch: the file is corrupt");
  }
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{19}, bytes.size() / 3, bytes.size() - 4, bytes.size() - 1}) {
    WriteBytes(bad, bytes.substr(0, size));
    SCOPED_TRACE("truncated to " + std::to_string(size) + " bytes");
    ExpectLoadError(bad, "checksum mismatch: the file is corrupt");
  }
  WriteBytes(bad, bytes + '\0');
  ExpectLoadError(bad, "checksum mismatch: the file is corrupt");
}

// A model file names no directory of the machine that wrote it.
TEST(CheckpointTest, SavedFileHoldsNoAbsolutePath) {
  const std::filesystem::path directory =
      std::filesystem::absolute(TempPath("machine_specific_directory"));
  std::filesystem::create_directories(directory);
  const std::string path = (directory / "model.pt").string();
  ModelInfo info = TinyInfo();
  info.notes = "dfmpc train --data data.h5";
  SaveCheckpoint(path, info, TinyNormalizer(), *testing::TinyModel(5));
  const std::string bytes = ReadBytes(path);
  EXPECT_EQ(bytes.find("machine_specific_directory"), std::string::npos);
  EXPECT_EQ(bytes.find(".tmp"), std::string::npos);  // nor the temporary file's name
  EXPECT_NO_THROW(LoadCheckpoint(path));
}

TEST(CheckpointTest, FailedSaveLeavesNoFile) {
  DfTransformer model = testing::TinyModel(5);
  const std::string path = TempPath("missing_dir/model.pt");
  EXPECT_ANY_THROW(SaveCheckpoint(path, TinyInfo(), TinyNormalizer(), *model));
  EXPECT_FALSE(std::filesystem::exists(path));
  ModelInfo wrong = TinyInfo();
  wrong.layout = TokenLayout{2, 4};  // 6 features for a 5-feature model
  EXPECT_THROW(SaveCheckpoint(TempPath("wrong.pt"), wrong, TinyNormalizer(), *model),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(TempPath("wrong.pt")));
  ModelInfo no_rate = TinyInfo();
  no_rate.action_repeat = 0;
  EXPECT_THROW(SaveCheckpoint(TempPath("no_rate.pt"), no_rate, TinyNormalizer(), *model),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(TempPath("no_rate.pt")));
  ModelInfo bad_levels = TinyInfo();
  bad_levels.sampling_levels = -2;
  EXPECT_THROW(SaveCheckpoint(TempPath("bad_levels.pt"), bad_levels, TinyNormalizer(), *model),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(TempPath("bad_levels.pt")));
}

}  // namespace
}  // namespace dfmpc::worldmodel
