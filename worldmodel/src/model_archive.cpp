#include "model_archive.h"

#include <torch/serialize.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "atomic_file.h"
#include "dfmpc/worldmodel/model_file.h"

namespace dfmpc::worldmodel {
namespace {

// Since format version 2 a model file is the torch archive followed by a
// trailer: this magic, the archive's size (8 bytes) and a CRC-32 (4 bytes) of
// everything before it, all little-endian. The archive stays a valid zip.
constexpr std::string_view kTrailerMagic = "DFMPCSUM";
constexpr std::size_t kTrailerSize = kTrailerMagic.size() + 8 + 4;
constexpr const char* kCorrupt = "checksum mismatch: the file is corrupt";

std::uint32_t Crc32(std::string_view bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

void AppendLittleEndian(std::uint64_t value, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::uint64_t ReadLittleEndian(std::string_view bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

// The archive inside `file` once its trailer checks out.
std::string_view VerifiedArchive(const std::string& path, std::string_view file) {
  if (file.size() < kTrailerSize ||
      file.substr(file.size() - kTrailerSize, kTrailerMagic.size()) != kTrailerMagic) {
    FailCheckpoint(path, std::string(kCorrupt) +
                             " or truncated (no checksum trailer; files written before format "
                             "version 2 have none)");
  }
  const std::string_view checked = file.substr(0, file.size() - 4);
  const std::uint64_t archive_size =
      ReadLittleEndian(file.substr(file.size() - kTrailerSize + kTrailerMagic.size(), 8));
  if (archive_size != file.size() - kTrailerSize ||
      ReadLittleEndian(file.substr(file.size() - 4)) != Crc32(checked)) {
    FailCheckpoint(path, kCorrupt);
  }
  return file.substr(0, archive_size);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) FailCheckpoint(path, "file does not exist or cannot be read");
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) FailCheckpoint(path, "cannot be read");
  return bytes;
}

}  // namespace

std::string WithChecksum(std::string archive) {
  const std::uint64_t archive_size = archive.size();
  archive += kTrailerMagic;
  AppendLittleEndian(archive_size, 8, archive);
  AppendLittleEndian(Crc32(archive), 4, archive);
  return archive;
}

void FailCheckpoint(const std::string& path, const std::string& why) {
  throw std::runtime_error("checkpoint " + path + ": " + why);
}

nlohmann::json ProvenanceHeader(const ModelProvenance& provenance, const std::string& format) {
  return {{"format", format},
          {"format_version", provenance.format_version},
          {"library_version", provenance.library_version},
          {"task", provenance.task},
          {"task_file", provenance.task_file},
          {"task_mjcf", provenance.task_mjcf},
          {"notes", provenance.notes}};
}

ModelProvenance ReadProvenance(const nlohmann::json& header) {
  ModelProvenance provenance;
  provenance.task = header.at("task").get<std::string>();
  // Absent in files written before models carried their task's files, and
  // in frame tokenizers written before they had the common header.
  provenance.task_file = header.value("task_file", "");
  provenance.task_mjcf = header.value("task_mjcf", "");
  provenance.notes = header.at("notes").get<std::string>();
  // Absent only in a video model's tokenizer record written before the
  // record had the common header; a file's own version is checked when it
  // is opened (OpenModelArchive).
  provenance.format_version = header.value("format_version", kCheckpointFormatVersion);
  provenance.library_version = header.at("library_version").get<std::string>();
  return provenance;
}

void SaveModelArchive(const std::string& path, nlohmann::json metadata,
                      const Normalizer& normalizer, torch::nn::Module& model,
                      const NamedModules& extra) {
  metadata["library_version"] = LibraryVersion();
  torch::serialize::OutputArchive archive;
  archive.write("metadata", c10::IValue(metadata.dump()));
  archive.write("normalizer_mean", normalizer.mean());
  archive.write("normalizer_scale", normalizer.scale());
  torch::serialize::OutputArchive weights;
  model.save(weights);
  archive.write("model", weights);
  for (const auto& [name, module] : extra) {
    torch::serialize::OutputArchive extra_weights;
    module->save(extra_weights);
    archive.write(name, extra_weights);
  }
  // Saved through a stream, the archive's records carry no file name.
  std::ostringstream bytes;
  archive.save_to(bytes);
  internal::WriteFileAtomically(path, WithChecksum(bytes.str()));
}

ModelArchive OpenAnyModelArchive(const std::string& path) {
  const std::string file = ReadFile(path);
  const std::string_view archive = VerifiedArchive(path, file);
  ModelArchive opened{path, {}, {}};
  c10::IValue metadata;
  try {
    // Onto the CPU whatever device the weights were saved from.
    opened.archive.load_from(archive.data(), archive.size(), c10::Device(c10::kCPU));
    if (!opened.archive.try_read("metadata", metadata) || !metadata.isString()) {
      FailCheckpoint(path, "not a dfmpc model (no metadata record)");
    }
  } catch (const c10::Error&) {
    FailCheckpoint(path, "truncated, corrupt or not a dfmpc model file");
  }
  try {
    opened.metadata = nlohmann::json::parse(metadata.toStringRef());
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  }
  return opened;
}

ModelArchive OpenModelArchive(const std::string& path, const std::string& format,
                              const std::string& description, const std::string& hint) {
  ModelArchive opened = OpenAnyModelArchive(path);
  try {
    const std::string found = opened.metadata.value("format", "");
    if (found != format) {
      FailCheckpoint(path, "not " + description + " (format '" + found + "')" +
                               (hint.empty() ? "" : "; " + hint));
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

std::string ModelFileFormat(const std::string& path) {
  return OpenAnyModelArchive(path).metadata.value("format", "");
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
    ReadModuleWeights(opened, "model", model);
    return normalizer;
  } catch (const c10::Error& e) {
    FailCheckpoint(opened.path, std::string("weights do not match the stored config: ") +
                                    e.what_without_backtrace());
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(opened.path, e.what());
  }
}

void ReadModuleWeights(ModelArchive& opened, const std::string& name, torch::nn::Module& module) {
  try {
    torch::serialize::InputArchive weights;
    opened.archive.read(name, weights);
    module.load(weights);
    module.eval();
  } catch (const c10::Error& e) {
    FailCheckpoint(opened.path, "weights of '" + name + "' do not match the stored config: " +
                                    e.what_without_backtrace());
  }
}

}  // namespace dfmpc::worldmodel
