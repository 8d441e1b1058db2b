// Trajectory datasets on disk: HDF5 with a D4RL-like layout, documented in
// envs/DATASET.md so Python (h5py) reads them too. Files are written
// atomically: an interrupted writer leaves no file, never a partial one.
#ifndef DFMPC_ENVS_DATASET_H_
#define DFMPC_ENVS_DATASET_H_

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/perturbation.h"

namespace dfmpc::envs {

// Version 3 records each episode's perturbation. Version 2 files (rewards
// summed over each control step's physics steps, episodes spanning
// `episode_physics_steps`) are still read, as unperturbed; version 1 read the
// reward once per control step and is refused (see envs/DATASET.md).
inline constexpr int kDatasetFormatVersion = 3;

struct DatasetInfo {
  std::string task;
  // The task's files (dfmpc/task/task_spec.h), carried on to the models
  // trained on the data; empty in files written before datasets carried them.
  std::string task_file;
  std::string task_mjcf;
  std::string policy;
  std::uint64_t seed = 0;
  int observation_size = 0;
  int action_size = 0;
  int action_repeat = 1;
  double control_timestep = 0.0;
  int episode_physics_steps = kEpisodePhysicsSteps;  // the episodes' time limit
  int frame_width = 0;   // 0: no frames stored
  int frame_height = 0;
  PerturbationSpec perturbation;  // what the episodes' perturbations were drawn from
  std::string library_version;  // filled in by the writer / from the file
  int format_version = kDatasetFormatVersion;
};

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A whole dataset in memory; step arrays hold all episodes back to back.
struct Dataset {
  DatasetInfo info;
  RowMatrixXf observations;       // N x observation size
  RowMatrixXf next_observations;  // N x observation size
  RowMatrixXf actions;            // N x action size
  Eigen::VectorXf rewards;        // N
  std::vector<std::uint8_t> terminals;  // N
  std::vector<std::uint8_t> timeouts;   // N: the time limit ended the episode here
  std::vector<std::int64_t> episode_starts;   // E
  std::vector<std::int64_t> episode_lengths;  // E
  std::vector<double> episode_returns;        // E
  std::vector<std::uint8_t> episode_success;  // E (all 0 without a success metric)
  std::vector<Perturbation> episode_perturbations;  // E
  std::vector<std::uint8_t> frames;  // N x height x width x 3 when info.frame_width > 0

  int num_steps() const { return static_cast<int>(rewards.size()); }
  int num_episodes() const { return static_cast<int>(episode_lengths.size()); }
};

// Streams episodes into a new file. Nothing appears at `path` until Commit;
// destroying the writer without Commit discards everything.
class DatasetWriter {
 public:
  DatasetWriter(const std::string& path, const DatasetInfo& info);
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // Throws std::invalid_argument if the episode's sizes (or its frames)
  // do not match the info. Records the episode's perturbation too.
  void Append(const Episode& episode);
  void Commit();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws std::runtime_error naming the file when it is missing, truncated,
// not HDF5, not a dfmpc dataset, of a format other than 2 or 3, or
// inconsistent.
Dataset ReadDataset(const std::string& path, bool load_frames = true);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_DATASET_H_
