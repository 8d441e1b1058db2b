#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "atomic_file.h"
#include "dataset_format.h"
#include "dfmpc/envs/dataset.h"
#include "hdf5_util.h"

namespace dfmpc::envs {

namespace f = dataset_format;

namespace {

hdf5::Handle CreateFile(const std::string& path) {
  // The HDF5 1.8 file format checksums the superblock and every object header
  // (attributes included); the 1.6 format of the default bounds has none.
  hdf5::Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  hdf5::Check(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V110, H5F_LIBVER_V110),
              "choosing the file format");
  return hdf5::Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose);
}

}  // namespace

class DatasetWriter::Impl {
 public:
  Impl(const std::string& path, const DatasetInfo& info)
      : info_(info),
        file_(path),
        h5_(CreateFile(file_.temporary_path())) {
    if (!h5_.valid()) throw std::runtime_error("cannot create dataset file next to '" + path + "'");
    if (info.observation_size < 1 || info.action_size < 1) {
      throw std::invalid_argument("dataset: observation and action sizes must be positive");
    }
    if (info.action_repeat < 1 || info.episode_physics_steps < 1) {
      throw std::invalid_argument(
          "dataset: action repeat and episode physics steps must be positive");
    }
    if ((info.frame_width > 0) != (info.frame_height > 0)) {
      throw std::invalid_argument("dataset: set both frame width and height, or neither");
    }
    ValidatePerturbation(info.perturbation);
    info_.library_version = DFMPC_VERSION;
    info_.format_version = kDatasetFormatVersion;
    const hid_t h5 = h5_.get();
    const hsize_t obs = info.observation_size;
    const hsize_t act = info.action_size;
    observations_.emplace(h5, f::kObservations, H5T_NATIVE_FLOAT, std::vector<hsize_t>{obs}, 1024, false);
    next_observations_.emplace(h5, f::kNextObservations, H5T_NATIVE_FLOAT, std::vector<hsize_t>{obs}, 1024, false);
    actions_.emplace(h5, f::kActions, H5T_NATIVE_FLOAT, std::vector<hsize_t>{act}, 1024, false);
    rewards_.emplace(h5, f::kRewards, H5T_NATIVE_FLOAT, std::vector<hsize_t>{}, 4096, false);
    terminals_.emplace(h5, f::kTerminals, H5T_NATIVE_UINT8, std::vector<hsize_t>{}, 4096, false);
    timeouts_.emplace(h5, f::kTimeouts, H5T_NATIVE_UINT8, std::vector<hsize_t>{}, 4096, false);
    if (info.frame_width > 0) {
      const std::vector<hsize_t> frame{static_cast<hsize_t>(info.frame_height),
                                       static_cast<hsize_t>(info.frame_width), 3};
      frames_.emplace(h5, f::kFrames, H5T_NATIVE_UINT8, frame, 16, true);
    }
  }

  void Append(const Episode& episode) {
    const int n = episode.length();
    if (episode.observations.cols() != info_.observation_size ||
        episode.actions.cols() != info_.action_size || episode.observations.rows() != n + 1 ||
        episode.actions.rows() != n) {
      throw std::invalid_argument("dataset: episode sizes do not match the dataset");
    }
    const std::size_t frame_bytes = static_cast<std::size_t>(info_.frame_width) * info_.frame_height * 3;
    if (frames_ && episode.frames.size() != static_cast<std::size_t>(n)) {
      throw std::invalid_argument("dataset: episode has " + std::to_string(episode.frames.size()) +
                                  " frames, expected one per step (" + std::to_string(n) + ")");
    }
    const RowMatrixXf observations = episode.observations.topRows(n).cast<float>();
    const RowMatrixXf next_observations = episode.observations.bottomRows(n).cast<float>();
    const RowMatrixXf actions = episode.actions.cast<float>();
    const Eigen::VectorXf rewards = episode.rewards.cast<float>();
    std::vector<std::uint8_t> terminals(n, 0), timeouts(n, 0);
    if (n > 0) {
      terminals[n - 1] = episode.terminated;
      timeouts[n - 1] = episode.truncated && !episode.terminated;
    }
    observations_->Append(observations.data(), n);
    next_observations_->Append(next_observations.data(), n);
    actions_->Append(actions.data(), n);
    rewards_->Append(rewards.data(), n);
    terminals_->Append(terminals.data(), n);
    timeouts_->Append(timeouts.data(), n);
    if (frames_) {
      for (const auto& frame : episode.frames) {
        if (frame.size() != frame_bytes) throw std::invalid_argument("dataset: frame has the wrong size");
        frames_->Append(frame.data(), 1);
      }
    }
    episode_starts_.push_back(num_steps_);
    episode_lengths_.push_back(n);
    episode_returns_.push_back(episode.Return());
    episode_success_.push_back(episode.success);
    const std::vector<double> perturbation = PerturbationValues(episode.perturbation);
    episode_perturbations_.insert(episode_perturbations_.end(), perturbation.begin(),
                                  perturbation.end());
    num_steps_ += n;
  }

  void Commit() {
    const hid_t h5 = h5_.get();
    const hsize_t episodes = episode_lengths_.size();
    WriteEpisodeArray(f::kEpisodeStarts, H5T_NATIVE_INT64, episode_starts_.data(), episodes);
    WriteEpisodeArray(f::kEpisodeLengths, H5T_NATIVE_INT64, episode_lengths_.data(), episodes);
    WriteEpisodeArray(f::kEpisodeReturns, H5T_NATIVE_DOUBLE, episode_returns_.data(), episodes);
    WriteEpisodeArray(f::kEpisodeSuccess, H5T_NATIVE_UINT8, episode_success_.data(), episodes);
    WritePerturbations(episodes);
    hdf5::WriteStringAttribute(h5, "format", f::kFormatName);
    hdf5::WriteInt64Attribute(h5, "format_version", info_.format_version);
    hdf5::WriteStringAttribute(h5, "library_version", info_.library_version);
    hdf5::WriteStringAttribute(h5, "task", info_.task);
    if (!info_.task_file.empty()) {
      hdf5::WriteStringAttribute(h5, "task_file", info_.task_file);
      hdf5::WriteStringAttribute(h5, "task_mjcf", info_.task_mjcf);
    }
    hdf5::WriteStringAttribute(h5, "policy", info_.policy);
    hdf5::WriteInt64Attribute(h5, "seed", static_cast<long long>(info_.seed));
    hdf5::WriteInt64Attribute(h5, "observation_size", info_.observation_size);
    hdf5::WriteInt64Attribute(h5, "action_size", info_.action_size);
    hdf5::WriteInt64Attribute(h5, "action_repeat", info_.action_repeat);
    hdf5::WriteDoubleAttribute(h5, "control_timestep", info_.control_timestep);
    hdf5::WriteInt64Attribute(h5, "episode_physics_steps", info_.episode_physics_steps);
    hdf5::WriteInt64Attribute(h5, "frame_width", info_.frame_width);
    hdf5::WriteInt64Attribute(h5, "frame_height", info_.frame_height);
    hdf5::WriteStringAttribute(h5, f::kPerturbation, FormatPerturbation(info_.perturbation));
    hdf5::WriteInt64Attribute(h5, "num_episodes", static_cast<long long>(episodes));
    hdf5::WriteInt64Attribute(h5, "num_steps", num_steps_);
    observations_.reset();
    next_observations_.reset();
    actions_.reset();
    rewards_.reset();
    terminals_.reset();
    timeouts_.reset();
    frames_.reset();
    hdf5::Check(H5Fflush(h5, H5F_SCOPE_GLOBAL), "flushing the dataset");
    h5_.Reset();
    file_.Commit();
  }

 private:
  void WriteEpisodeArray(const char* name, hid_t type, const void* data, hsize_t count) {
    hdf5::RowWriter writer(h5_.get(), name, type, {}, 1024, false);
    writer.Append(data, count);
  }

  // Episodes x parameters, the parameter names in an attribute.
  void WritePerturbations(hsize_t episodes) {
    hdf5::RowWriter writer(h5_.get(), f::kEpisodePerturbations, H5T_NATIVE_DOUBLE,
                           {PerturbationNames().size()}, 1024, false);
    writer.Append(episode_perturbations_.data(), episodes);
    hdf5::WriteStringAttribute(writer.id(), f::kNames, f::ColumnNames());
  }

  DatasetInfo info_;
  internal::AtomicFile file_;
  hdf5::Handle h5_;
  std::optional<hdf5::RowWriter> observations_, next_observations_, actions_, rewards_, terminals_,
      timeouts_, frames_;
  std::vector<std::int64_t> episode_starts_, episode_lengths_;
  std::vector<double> episode_returns_;
  std::vector<double> episode_perturbations_;  // episodes x parameters, row-major
  std::vector<std::uint8_t> episode_success_;
  long long num_steps_ = 0;
};

DatasetWriter::DatasetWriter(const std::string& path, const DatasetInfo& info) {
  const hdf5::QuietErrors quiet;
  impl_ = std::make_unique<Impl>(path, info);
}

DatasetWriter::~DatasetWriter() {
  const hdf5::QuietErrors quiet;
  impl_.reset();
}

void DatasetWriter::Append(const Episode& episode) {
  const hdf5::QuietErrors quiet;
  impl_->Append(episode);
}

void DatasetWriter::Commit() {
  const hdf5::QuietErrors quiet;
  impl_->Commit();
}

}  // namespace dfmpc::envs
