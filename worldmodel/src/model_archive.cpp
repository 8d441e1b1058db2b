#include "model_archive.h"

#include <torch/serialize.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "atomic_file.h"

namespace dfmpc::worldmodel {

void FailCheckpoint(const std::string& path, const std::string& why) {
  throw std::runtime_error("checkpoint " + path + ": " + why);
}

void SaveModelArchive(const std::string& path, nlohmann::json metadata,
                      const Normalizer& normalizer, torch::nn::Module& model) {
  metadata["library_version"] = LibraryVersion();
  torch::serialize::OutputArchive archive;
  archive.write("metadata", c10::IValue(metadata.dump()));
  archive.write("normalizer_mean", normalizer.mean());
  archive.write("normalizer_scale", normalizer.scale());
  torch::serialize::OutputArchive weights;
  model.save(weights);
  archive.write("model", weights);
  // Saved through a stream, the archive's records carry no file name.
  std::ostringstream bytes;
  archive.save_to(bytes);
  internal::WriteFileAtomically(path, bytes.str());
}

ModelArchive OpenModelArchive(const std::string& path, const std::string& format,
                              const std::string& description) {
  if (!std::ifstream(path).good()) FailCheckpoint(path, "file does not exist or cannot be read");
  ModelArchive opened{path, {}, {}};
  c10::IValue metadata;
  try {
    opened.archive.load_from(path);
    if (!opened.archive.try_read("metadata", metadata) || !metadata.isString()) {
      FailCheckpoint(path, "not a dfmpc model (no metadata record)");
    }
  } catch (const c10::Error&) {
    FailCheckpoint(path, "truncated, corrupt or not a dfmpc model file");
  }
  try {
    opened.metadata = nlohmann::json::parse(metadata.toStringRef());
    const std::string found = opened.metadata.value("format", "");
    if (found != format) {
      FailCheckpoint(path, "not " + description + " (format '" + found + "')");
    }
    const int version = opened.metadata.at("format_version").get<int>();
    if (version != kCheckpointFormatVersion) {
      FailCheckpoint(path, "format version " + std::to_string(version) +
                               ", this library reads version " +
                               std::to_string(kCheckpointFormatVersion));
    }
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  }
  return opened;
}

void CheckExpectation(const std::string& path, const std::string& task, int token_dim,
                      const CheckpointExpectation& expect) {
  if (!expect.task.empty() && task != expect.task) {
    FailCheckpoint(path, "model was trained for task '" + task + "', not '" + expect.task + "'");
  }
  if (expect.token_dim > 0 && token_dim != expect.token_dim) {
    FailCheckpoint(path, "model has token dimension " + std::to_string(token_dim) +
                             ", expected " + std::to_string(expect.token_dim));
  }
}

Normalizer ReadNormalizerAndWeights(ModelArchive& opened, int token_dim,
                                    torch::nn::Module& model) {
  try {
    at::Tensor mean, scale;
    opened.archive.read("normalizer_mean", mean);
    opened.archive.read("normalizer_scale", scale);
    Normalizer normalizer(mean, scale);
    if (normalizer.dim() != token_dim) {
      FailCheckpoint(opened.path, "normalizer has " + std::to_string(normalizer.dim()) +
                                      " features, the model " + std::to_string(token_dim));
    }
    torch::serialize::InputArchive weights;
    opened.archive.read("model", weights);
    model.load(weights);
    model.eval();
    return normalizer;
  } catch (const c10::Error& e) {
    FailCheckpoint(opened.path, std::string("weights do not match the stored config: ") +
                                    e.what_without_backtrace());
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(opened.path, e.what());
  }
}

}  // namespace dfmpc::worldmodel
