// Mutation test of the loaders that read files from disk: thousands of
// truncated, bit-flipped and random versions of a real checkpoint, a real
// dataset and a real task file are either refused with an exception or, for
// the dataset, loaded unchanged (a flipped byte in unused space), or for the
// task file, build an environment that runs. Nothing crashes.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>

#include "dfmpc/envs/dataset.h"
#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/envs/predictive_sampling.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "tiny_model.h"

namespace dfmpc {
namespace {

namespace fs = std::filesystem;

// Mutated files per loader; lower it where loads are slow (sanitizers).
constexpr int kMutationsPerFile = 1500;

struct Mutation {
  std::string bytes;
  std::string description;  // e.g. "byte 1234 xor 0x5a", for failure messages
};

// Mutation `i` of `original`: the empty file first, then in turn truncations,
// flipped bytes and random bytes (half of them behind the original's first
// 8 bytes, so that the parsers get past the file signature).
Mutation Mutate(const std::string& original, int i, std::mt19937_64& random) {
  if (i == 0) return {"", "zero length"};
  std::uniform_int_distribution<std::size_t> position(0, original.size() - 1);
  if (i % 10 < 4) {
    const std::size_t length = position(random);
    return {original.substr(0, length), "truncated to " + std::to_string(length) + " bytes"};
  }
  if (i % 10 < 9) {
    const std::size_t at = position(random);
    const int mask = std::uniform_int_distribution<int>(1, 255)(random);
    std::string bytes = original;
    bytes[at] = static_cast<char>(bytes[at] ^ mask);
    return {bytes, "byte " + std::to_string(at) + " xor " + std::to_string(mask)};
  }
  const std::size_t length = position(random);
  std::string bytes = i % 20 == 9 ? original.substr(0, 8) : std::string();
  std::uniform_int_distribution<int> byte(0, 255);
  while (bytes.size() < length) bytes.push_back(static_cast<char>(byte(random)));
  return {bytes, std::to_string(length) + " random bytes (" + std::to_string(i) + ")"};
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Feeds every mutation of the file at `path` to `load`, which returns
// whether a successful load gave valid contents. Returns the loads that
// succeeded.
template <typename Load>
int FeedMutations(const std::string& path, Load load) {
  const std::string original = ReadBytes(path);
  EXPECT_GT(original.size(), 1000u);
  const std::string mutated = path + ".mutated";
  std::mt19937_64 random(11);
  int loaded = 0;
  for (int i = 0; i < kMutationsPerFile; ++i) {
    const Mutation mutation = Mutate(original, i, random);
    WriteBytes(mutated, mutation.bytes);
    try {
      if (!load(mutated)) ADD_FAILURE() << mutation.description << ": invalid contents loaded";
      ++loaded;
    } catch (const std::runtime_error&) {
    } catch (const std::invalid_argument&) {
    }
  }
  return loaded;
}

fs::path EmptyDirectory(const std::string& name) {
  const fs::path directory = fs::path(::testing::TempDir()) / ("dfmpc_mutation_" + name);
  fs::remove_all(directory);
  fs::create_directories(directory);
  return directory;
}

TEST(LoaderMutationTest, CorruptCheckpointsAreRefused) {
  const std::string path = (EmptyDirectory("checkpoint") / "model.pt").string();
  worldmodel::ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = worldmodel::TokenLayout{1, 2, /*observation_deltas=*/true};
  info.config = worldmodel::testing::TinyConfig(5);
  info.train_window = 16;
  const worldmodel::Normalizer normalizer(torch::zeros({5}), torch::ones({5}));
  worldmodel::SaveCheckpoint(path, info, normalizer, *worldmodel::testing::TinyModel(5));
  // The checksum covers every byte: no mutation loads.
  const int loaded = FeedMutations(path, [](const std::string& file) {
    worldmodel::LoadCheckpoint(file);
    return false;
  });
  EXPECT_EQ(loaded, 0);
}

TEST(LoaderMutationTest, CorruptDatasetsAreRefusedOrLoadUnchanged) {
  const std::string path = (EmptyDirectory("dataset") / "data.h5").string();
  envs::EnvOptions options;
  options.episode_physics_steps = 12;
  const auto env = envs::MakeEnv("pendulum_swingup", options);
  envs::DatasetInfo info;
  info.task = env->name();
  info.policy = "random";
  info.observation_size = env->observation_spec().size();
  info.action_size = env->action_spec().size();
  info.control_timestep = env->control_timestep();
  info.frame_width = 4;
  info.frame_height = 3;
  {
    envs::DatasetWriter writer(path, info);
    for (std::uint64_t seed : {1, 2}) {
      envs::RandomPolicy policy(env->action_spec(), seed);
      envs::Episode episode = envs::RunEpisode(*env, policy, seed);
      episode.frames.assign(episode.length(), std::vector<std::uint8_t>(4 * 3 * 3, 7));
      writer.Append(episode);
    }
    writer.Commit();
  }
  const envs::Dataset original = envs::ReadDataset(path);
  const int loaded = FeedMutations(path, [&](const std::string& file) {
    const envs::Dataset data = envs::ReadDataset(file);
    return data.observations.allFinite() && data.next_observations.allFinite() &&
           data.actions.allFinite() && data.rewards.allFinite() &&
           data.observations == original.observations &&
           data.next_observations == original.next_observations &&
           data.actions == original.actions && data.rewards == original.rewards &&
           data.terminals == original.terminals && data.timeouts == original.timeouts &&
           data.episode_starts == original.episode_starts &&
           data.episode_lengths == original.episode_lengths &&
           data.episode_returns == original.episode_returns && data.frames == original.frames &&
           data.info.task == original.info.task;
  });
  std::cout << loaded << " of " << kMutationsPerFile
            << " mutated datasets loaded (flips in unused bytes)\n";
}

// A task file that still parses after a mutation (a flip in a comment, a
// changed digit) is a valid task: it must build everything it feeds and run.
TEST(LoaderMutationTest, CorruptTaskFilesAreRefusedOrRun) {
  const fs::path folder = EmptyDirectory("task");
  const task::TaskSpec original = task::LoadTaskSpec("cartpole_swingup");
  std::ofstream(folder / "cartpole.xml") << original.mjcf_text;
  const std::string path = (folder / "task.toml").string();
  WriteBytes(path, original.toml_text);
  const int loaded = FeedMutations(path, [&](const std::string& file) {
    fs::rename(file, path);
    const task::TaskSpec spec = task::LoadTaskSpec(folder.string());
    envs::EnvOptions options;
    options.episode_physics_steps = 20;
    const auto env = envs::MakeEnv(spec, options);
    planner::MakeTaskCost(spec);
    planner::TunedPlannerOptions(spec);
    envs::OracleOptions(spec);
    envs::RandomPolicy policy(env->action_spec(), 1);
    const envs::Episode episode = envs::RunEpisode(*env, policy, 1);
    return episode.observations.allFinite() && episode.rewards.allFinite();
  });
  std::cout << loaded << " of " << kMutationsPerFile
            << " mutated task files loaded (flips in comments, changed values)\n";
}

}  // namespace
}  // namespace dfmpc
