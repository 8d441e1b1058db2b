#include <stdexcept>
#include <string>
#include <vector>

#include "dataset_format.h"
#include "dfmpc/envs/dataset.h"
#include "hdf5_util.h"

namespace dfmpc::envs {

namespace f = dataset_format;

namespace {

void CheckShape(hid_t file, const char* name, const std::vector<hsize_t>& shape) {
  if (hdf5::Shape(file, name) != shape) {
    throw std::runtime_error(std::string("dataset '") + name + "' has an unexpected shape");
  }
}

// Reads a dataset of shape [rows, row_dims...] into `buffer`, checking the shape.
template <typename T>
void ReadArray(hid_t file, const char* name, hid_t type, const std::vector<hsize_t>& shape,
               T* buffer) {
  CheckShape(file, name, shape);
  hsize_t count = 1;
  for (hsize_t d : shape) count *= d;
  if (count > 0) hdf5::ReadInto(file, name, type, buffer);
}

DatasetInfo ReadInfo(hid_t file) {
  const std::string format = (H5Aexists(file, "format") > 0)
                                 ? hdf5::ReadStringAttribute(file, "format")
                                 : std::string();
  if (format != f::kFormatName) {
    throw std::runtime_error("not a dfmpc dataset (no format=\"dfmpc-dataset\" attribute)");
  }
  DatasetInfo info;
  info.format_version = static_cast<int>(hdf5::ReadInt64Attribute(file, "format_version"));
  if (info.format_version == 1) {
    throw std::runtime_error(
        "dataset format version 1 is not supported: its rewards were read once per control "
        "step, not summed over the physics steps (version 2); collect it again with this "
        "version of dfmpc");
  }
  if (info.format_version != 2 && info.format_version != kDatasetFormatVersion) {
    throw std::runtime_error("dataset format version " + std::to_string(info.format_version) +
                             " is not supported (this library reads versions 2 and " +
                             std::to_string(kDatasetFormatVersion) + ")");
  }
  info.library_version = hdf5::ReadStringAttribute(file, "library_version");
  info.task = hdf5::ReadStringAttribute(file, "task");
  // Absent in files written before datasets carried their task's files.
  if (H5Aexists(file, "task_file") > 0) {
    info.task_file = hdf5::ReadStringAttribute(file, "task_file");
    info.task_mjcf = hdf5::ReadStringAttribute(file, "task_mjcf");
  }
  info.policy = hdf5::ReadStringAttribute(file, "policy");
  info.seed = static_cast<std::uint64_t>(hdf5::ReadInt64Attribute(file, "seed"));
  info.observation_size = static_cast<int>(hdf5::ReadInt64Attribute(file, "observation_size"));
  info.action_size = static_cast<int>(hdf5::ReadInt64Attribute(file, "action_size"));
  info.action_repeat = static_cast<int>(hdf5::ReadInt64Attribute(file, "action_repeat"));
  info.control_timestep = hdf5::ReadDoubleAttribute(file, "control_timestep");
  info.episode_physics_steps =
      static_cast<int>(hdf5::ReadInt64Attribute(file, "episode_physics_steps"));
  info.frame_width = static_cast<int>(hdf5::ReadInt64Attribute(file, "frame_width"));
  info.frame_height = static_cast<int>(hdf5::ReadInt64Attribute(file, "frame_height"));
  if (info.format_version >= 3) {
    try {
      info.perturbation = ParsePerturbation(hdf5::ReadStringAttribute(file, f::kPerturbation));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("attribute 'perturbation': ") + e.what());
    }
  }
  return info;
}

// Version 3's per-episode perturbations; version 2 episodes are unperturbed.
std::vector<Perturbation> ReadPerturbations(hid_t file, int format_version, hsize_t episodes) {
  if (format_version < 3) return std::vector<Perturbation>(episodes);
  const hsize_t columns = PerturbationNames().size();
  const std::string names = hdf5::ReadStringAttribute(file, f::kEpisodePerturbations, f::kNames);
  if (names != f::ColumnNames()) {
    throw std::runtime_error(std::string("dataset '") + f::kEpisodePerturbations +
                             "' has the columns '" + names + "', expected '" + f::ColumnNames() +
                             "'");
  }
  std::vector<double> values(episodes * columns);
  ReadArray(file, f::kEpisodePerturbations, H5T_NATIVE_DOUBLE, {episodes, columns}, values.data());
  std::vector<Perturbation> perturbations;
  for (hsize_t i = 0; i < episodes; ++i) {
    try {
      perturbations.push_back(PerturbationFromValues(
          std::vector<double>(values.begin() + i * columns, values.begin() + (i + 1) * columns)));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("episode " + std::to_string(i) + ": " + e.what());
    }
  }
  return perturbations;
}

Dataset ReadContents(hid_t file, bool load_frames) {
  Dataset data;
  data.info = ReadInfo(file);
  const hsize_t n = static_cast<hsize_t>(hdf5::ReadInt64Attribute(file, "num_steps"));
  const hsize_t e = static_cast<hsize_t>(hdf5::ReadInt64Attribute(file, "num_episodes"));
  const hsize_t obs = data.info.observation_size;
  const hsize_t act = data.info.action_size;
  // Shapes before sizes: a corrupt count must not size an allocation.
  CheckShape(file, f::kObservations, {n, obs});
  CheckShape(file, f::kActions, {n, act});
  CheckShape(file, f::kEpisodeStarts, {e});
  data.observations.resize(n, obs);
  data.next_observations.resize(n, obs);
  data.actions.resize(n, act);
  data.rewards.resize(n);
  data.terminals.resize(n);
  data.timeouts.resize(n);
  ReadArray(file, f::kObservations, H5T_NATIVE_FLOAT, {n, obs}, data.observations.data());
  ReadArray(file, f::kNextObservations, H5T_NATIVE_FLOAT, {n, obs}, data.next_observations.data());
  ReadArray(file, f::kActions, H5T_NATIVE_FLOAT, {n, act}, data.actions.data());
  ReadArray(file, f::kRewards, H5T_NATIVE_FLOAT, {n}, data.rewards.data());
  ReadArray(file, f::kTerminals, H5T_NATIVE_UINT8, {n}, data.terminals.data());
  ReadArray(file, f::kTimeouts, H5T_NATIVE_UINT8, {n}, data.timeouts.data());
  data.episode_starts.resize(e);
  data.episode_lengths.resize(e);
  data.episode_returns.resize(e);
  data.episode_success.resize(e);
  ReadArray(file, f::kEpisodeStarts, H5T_NATIVE_INT64, {e}, data.episode_starts.data());
  ReadArray(file, f::kEpisodeLengths, H5T_NATIVE_INT64, {e}, data.episode_lengths.data());
  ReadArray(file, f::kEpisodeReturns, H5T_NATIVE_DOUBLE, {e}, data.episode_returns.data());
  ReadArray(file, f::kEpisodeSuccess, H5T_NATIVE_UINT8, {e}, data.episode_success.data());
  data.episode_perturbations = ReadPerturbations(file, data.info.format_version, e);
  std::int64_t expected_start = 0;
  for (hsize_t i = 0; i < e; ++i) {
    if (data.episode_starts[i] != expected_start || data.episode_lengths[i] < 0) {
      throw std::runtime_error("episode boundaries are inconsistent");
    }
    expected_start += data.episode_lengths[i];
  }
  if (expected_start != static_cast<std::int64_t>(n)) {
    throw std::runtime_error("episode lengths do not add up to the number of steps");
  }
  if (load_frames && data.info.frame_width > 0) {
    const hsize_t h = data.info.frame_height;
    const hsize_t w = data.info.frame_width;
    CheckShape(file, f::kFrames, {n, h, w, 3});
    data.frames.resize(n * h * w * 3);
    ReadArray(file, f::kFrames, H5T_NATIVE_UINT8, {n, h, w, 3}, data.frames.data());
  }
  return data;
}

}  // namespace

Dataset ReadDataset(const std::string& path, bool load_frames) {
  const hdf5::QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw std::runtime_error("cannot read dataset '" + path +
                             "': missing, truncated or not an HDF5 file");
  }
  hdf5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) {
    throw std::runtime_error("cannot read dataset '" + path + "': HDF5 cannot open it (truncated?)");
  }
  try {
    return ReadContents(file.get(), load_frames);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot read dataset '" + path + "': " + e.what());
  }
}

}  // namespace dfmpc::envs
