#include "dfmpc/envs/dataset.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/collect.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/perturbation.h"
#include "dfmpc/envs/policy.h"

namespace dfmpc::envs {
namespace {

namespace fs = std::filesystem;

class DatasetTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) /
           ("dfmpc_dataset_" +
            std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  DatasetInfo Info(const Env& env, int frame_width = 0, int frame_height = 0) const {
    DatasetInfo info;
    info.task = env.name();
    info.policy = "random";
    info.seed = 42;
    info.observation_size = env.observation_spec().size();
    info.action_size = env.action_spec().size();
    info.control_timestep = env.control_timestep();
    info.episode_physics_steps = env.episode_length() * env.action_repeat();
    info.frame_width = frame_width;
    info.frame_height = frame_height;
    return info;
  }

  // A short random-policy episode with synthetic frames (no rendering).
  static Episode MakeEpisode(Env& env, std::uint64_t seed, int width, int height) {
    RandomPolicy policy(env.action_spec(), seed);
    Episode episode = RunEpisode(env, policy, seed);
    for (int t = 0; t < episode.length(); ++t) {
      episode.frames.emplace_back(static_cast<std::size_t>(width) * height * 3,
                                  static_cast<std::uint8_t>(t + seed));
    }
    return episode;
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Commits a dataset of one `steps`-step reacher episode at `name`; returns its path.
  std::string WriteOneEpisode(const std::string& name, int steps) const;
  std::size_t FilesInDir() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }

  fs::path dir_;
};

std::unique_ptr<Env> ShortEnv(int steps) {
  EnvOptions options;
  options.episode_physics_steps = steps;  // action repeat 1: one per control step
  return MakeEnv("reacher", options);
}

// Rewrites the file's format_version attribute, as an older writer set it.
void SetFormatVersion(const std::string& path, std::int64_t version) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t attribute = H5Aopen(file, "format_version", H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, &version), 0);
  H5Aclose(attribute);
  H5Fclose(file);
}

std::string DatasetTest::WriteOneEpisode(const std::string& name, int steps) const {
  auto env = ShortEnv(steps);
  const std::string path = Path(name);
  DatasetWriter writer(path, Info(*env));
  writer.Append(MakeEpisode(*env, 1, 0, 0));
  writer.Commit();
  return path;
}

TEST_F(DatasetTest, RoundTripsEpisodesAndMetadata) {
  auto env = ShortEnv(20);
  const Episode a = MakeEpisode(*env, 1, 4, 3);
  const Episode b = MakeEpisode(*env, 2, 4, 3);
  const std::string path = Path("data.h5");
  {
    DatasetWriter writer(path, Info(*env, 4, 3));
    writer.Append(a);
    writer.Append(b);
    EXPECT_FALSE(fs::exists(path));
    writer.Commit();
  }
  EXPECT_EQ(FilesInDir(), 1u);
  const Dataset data = ReadDataset(path);
  EXPECT_EQ(data.info.task, "reacher");
  EXPECT_EQ(data.info.policy, "random");
  EXPECT_EQ(data.info.seed, 42u);
  EXPECT_EQ(data.info.format_version, kDatasetFormatVersion);
  EXPECT_EQ(data.info.episode_physics_steps, 20);
  EXPECT_FALSE(data.info.library_version.empty());
  EXPECT_EQ(data.num_steps(), 40);
  ASSERT_EQ(data.num_episodes(), 2);
  EXPECT_EQ(data.episode_starts[1], 20);
  EXPECT_EQ(data.episode_lengths[0], 20);
  EXPECT_DOUBLE_EQ(data.episode_returns[1], b.Return());
  EXPECT_EQ(data.observations.topRows(20), a.observations.topRows(20).cast<float>());
  EXPECT_EQ(data.next_observations.bottomRows(20), b.observations.bottomRows(20).cast<float>());
  EXPECT_EQ(data.actions.bottomRows(20), b.actions.cast<float>());
  EXPECT_EQ(data.rewards.head(20), a.rewards.cast<float>());
  EXPECT_EQ(data.timeouts[19], 1);
  EXPECT_EQ(data.timeouts[18], 0);
  EXPECT_EQ(data.terminals[19], 0);
  ASSERT_EQ(data.frames.size(), 40u * 4 * 3 * 3);
  EXPECT_EQ(data.frames[20 * 36], b.frames[0][0]);
  EXPECT_TRUE(ReadDataset(path, false).frames.empty());
}

// A policy the caller brings (the planner, in `dfmpc collect --policy
// dfmpc`): its own actions and name are what the dataset holds, and it is
// reset at every episode's first observation.
class HalfFirstObservation final : public Policy {
 public:
  void Reset(const Eigen::VectorXd& observation) override {
    ++resets;
    first = observation;
  }
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override {
    ++acts;
    return Eigen::VectorXd::Constant(2, 0.5 * std::tanh(first(0)));
  }
  int resets = 0, acts = 0;
  Eigen::VectorXd first;
};

TEST_F(DatasetTest, CollectsTheCallersPolicyUnderItsName) {
  CollectOptions options;
  options.task = "reacher";
  options.episodes = 2;
  options.policy = "half-first-observation";
  options.seed = 7;
  options.env.episode_physics_steps = 15;
  HalfFirstObservation policy;
  const std::string path = Path("callers.h5");
  const CollectSummary summary = CollectDataset(path, options, policy);
  EXPECT_EQ(summary.episodes, 2);
  EXPECT_EQ(summary.steps, 30);
  EXPECT_EQ(policy.resets, 2);
  EXPECT_EQ(policy.acts, 30);
  const Dataset data = ReadDataset(path);
  EXPECT_EQ(data.info.policy, "half-first-observation");
  EXPECT_EQ(data.info.seed, 7u);
  ASSERT_EQ(data.num_episodes(), 2);
  for (int e = 0; e < 2; ++e) {
    const int start = data.episode_starts[e];
    const float expected = static_cast<float>(0.5 * std::tanh(data.observations(start, 0)));
    EXPECT_NEAR(data.actions(start + 14, 1), expected, 1e-6) << "episode " << e;
  }
  // The episodes are the baseline collection's with the same seed.
  options.policy = "random";
  const std::string baseline = Path("random.h5");
  CollectDataset(baseline, options);
  EXPECT_EQ(ReadDataset(baseline).observations.row(15), data.observations.row(15));
}

// Version 1 read one reward per control step; its returns at an action
// repeat above 1 mean something else, so such a file is refused by name.
TEST_F(DatasetTest, AVersionOneFileIsRefusedNamingTheVersion) {
  const std::string path = WriteOneEpisode("old.h5", 5);
  SetFormatVersion(path, 1);
  try {
    ReadDataset(path);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("format version 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("collect it again"), std::string::npos) << e.what();
  }
}

// Version 3 records each episode's perturbation, drawn here from ranges.
TEST_F(DatasetTest, RecordsEachEpisodesPerturbation) {
  EnvOptions options;
  options.episode_physics_steps = 10;
  options.perturbation = ParsePerturbation("obs_noise=0.01,mass=0.7:1.3,delay=0:2");
  auto env = MakeEnv("reacher", options);
  DatasetInfo info = Info(*env);
  info.perturbation = options.perturbation;
  const std::string path = Path("perturbed.h5");
  std::vector<Episode> episodes;
  {
    DatasetWriter writer(path, info);
    for (std::uint64_t seed : {1, 2, 3}) {
      episodes.push_back(MakeEpisode(*env, seed, 0, 0));
      writer.Append(episodes.back());
    }
    writer.Commit();
  }
  const Dataset data = ReadDataset(path);
  EXPECT_EQ(FormatPerturbation(data.info.perturbation), "obs_noise=0.01,delay=0:2,mass=0.7:1.3");
  ASSERT_EQ(data.episode_perturbations.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const Perturbation& p = data.episode_perturbations[i];
    EXPECT_EQ(PerturbationValues(p), PerturbationValues(episodes[i].perturbation)) << i;
    EXPECT_EQ(p.obs_noise, 0.01);
    EXPECT_GE(p.mass, 0.7);
    EXPECT_LE(p.mass, 1.3);
  }
  EXPECT_NE(data.episode_perturbations[0].mass, data.episode_perturbations[1].mass);
}

// A version 2 file (no perturbation records) reads as unperturbed.
TEST_F(DatasetTest, AVersionTwoFileStillLoads) {
  const std::string path = WriteOneEpisode("v2.h5", 5);
  SetFormatVersion(path, 2);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  ASSERT_GE(H5Ldelete(file, "episode_perturbations", H5P_DEFAULT), 0);
  ASSERT_GE(H5Adelete(file, "perturbation"), 0);
  H5Fclose(file);
  const Dataset data = ReadDataset(path);
  EXPECT_EQ(data.info.format_version, 2);
  EXPECT_TRUE(data.info.perturbation.IsNominal());
  ASSERT_EQ(data.episode_perturbations.size(), 1u);
  EXPECT_TRUE(data.episode_perturbations[0].IsNominal());
  EXPECT_EQ(data.num_steps(), 5);
}

TEST_F(DatasetTest, UnknownVersionsAreRefusedNamingTheVersion) {
  const std::string path = WriteOneEpisode("future.h5", 5);
  SetFormatVersion(path, 4);
  try {
    ReadDataset(path);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("format version 4 is not supported"), std::string::npos)
        << e.what();
  }
}

TEST_F(DatasetTest, UncommittedWriterLeavesNoFile) {
  auto env = ShortEnv(5);
  const std::string path = Path("never.h5");
  {
    DatasetWriter writer(path, Info(*env));
    writer.Append(MakeEpisode(*env, 1, 0, 0));
  }
  EXPECT_EQ(FilesInDir(), 0u);
}

TEST_F(DatasetTest, RejectsEpisodesOfTheWrongShape) {
  auto env = ShortEnv(5);
  DatasetWriter writer(Path("shape.h5"), Info(*env, 4, 3));
  Episode episode = MakeEpisode(*env, 1, 4, 3);
  episode.frames.pop_back();
  EXPECT_THROW(writer.Append(episode), std::invalid_argument);
  auto other = MakeEnv("cartpole_swingup");
  EXPECT_THROW(writer.Append(MakeEpisode(*other, 1, 4, 3)), std::invalid_argument);
}

TEST_F(DatasetTest, TruncatedFileIsAClearError) {
  const std::string path = WriteOneEpisode("full.h5", 50);
  const std::string truncated = Path("truncated.h5");
  {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(truncated, std::ios::binary).write(bytes.data(), bytes.size() / 2);
  }
  try {
    ReadDataset(truncated);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadDataset(Path("missing.h5")), std::runtime_error);
}

herr_t CountingHandler(hid_t, void* calls) {
  ++*static_cast<int*>(calls);
  return 0;
}

TEST_F(DatasetTest, LeavesTheProgramsHdf5ErrorHandlerAsItWas) {
  // A program that uses HDF5 itself keeps its own error reporting: the
  // library silences HDF5 only inside its own calls.
  H5E_auto2_t saved_handler = nullptr;
  void* saved_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &saved_handler, &saved_data);
  int calls = 0;
  H5Eset_auto2(H5E_DEFAULT, CountingHandler, &calls);
  ReadDataset(WriteOneEpisode("ok.h5", 20));
  std::ofstream(Path("broken.h5")) << "not hdf5";
  EXPECT_THROW(ReadDataset(Path("broken.h5")), std::runtime_error);
  EXPECT_EQ(calls, 0) << "HDF5 reported errors of the library's own calls";
  H5E_auto2_t handler = nullptr;
  void* data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &handler, &data);
  EXPECT_EQ(handler, &CountingHandler);
  EXPECT_EQ(data, &calls);
  H5Fopen(Path("missing.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);  // the program's own error
  EXPECT_GT(calls, 0);
  H5Eset_auto2(H5E_DEFAULT, saved_handler, saved_data);
}

TEST_F(DatasetTest, ForeignFilesAreAClearError) {
  const std::string text = Path("notes.txt");
  std::ofstream(text) << "not a dataset\n";
  EXPECT_THROW(ReadDataset(text), std::runtime_error);

  const std::string foreign = Path("foreign.h5");
  const hid_t file = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  try {
    ReadDataset(foreign);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a dfmpc dataset"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dfmpc::envs
