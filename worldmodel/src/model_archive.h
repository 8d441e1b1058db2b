// The file format shared by every model checkpoint (internal): one torch
// archive holding a JSON metadata record, the normalization statistics and
// the module's weights, written atomically with a checksum.
#ifndef DFMPC_WORLDMODEL_SRC_MODEL_ARCHIVE_H_
#define DFMPC_WORLDMODEL_SRC_MODEL_ARCHIVE_H_

#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {

// Throws std::runtime_error("checkpoint <path>: <why>").
[[noreturn]] void FailCheckpoint(const std::string& path, const std::string& why);

// The bytes of a model file holding the serialized torch `archive`: the
// archive followed by a trailer with its size and a CRC-32 of the file.
std::string WithChecksum(std::string archive);

// Modules stored beside the main one, each under its own record name.
using NamedModules = std::vector<std::pair<std::string, torch::nn::Module*>>;

// The header fields every model file holds (ModelProvenance) and its
// `format`; each kind adds its own fields to it.
nlohmann::json ProvenanceHeader(const ModelProvenance& provenance, const std::string& format);

// The ModelProvenance of a header ProvenanceHeader wrote. Throws
// nlohmann::json::exception for a missing field; the task's files and the
// format version may be absent (see the definition).
ModelProvenance ReadProvenance(const nlohmann::json& header);

// `metadata` must hold "format" and "format_version"; "library_version" is
// stamped here. `model` is stored as the record "model".
void SaveModelArchive(const std::string& path, nlohmann::json metadata,
                      const Normalizer& normalizer, torch::nn::Module& model,
                      const NamedModules& extra = {});

// An opened archive whose metadata names `format` at the supported version.
struct ModelArchive {
  std::string path;
  torch::serialize::InputArchive archive;
  nlohmann::json metadata;
};

// Any model file's archive and metadata, once its checksum is verified.
// Throws (via FailCheckpoint) for a missing, corrupt, truncated or foreign
// file.
ModelArchive OpenAnyModelArchive(const std::string& path);

// Verifies the checksum before anything is parsed. Throws (via
// FailCheckpoint) for a missing, corrupt, truncated or foreign file, another
// format or format version. `description` names the expected kind in errors,
// with its article ("a dfmpc model file"); `hint` (may be empty) follows
// the message for a file of another format.
ModelArchive OpenModelArchive(const std::string& path, const std::string& format,
                              const std::string& description, const std::string& hint = "");

// Checks the task and token dimension against `expect` (empty / 0: unchecked).
void CheckExpectation(const std::string& path, const std::string& task, int token_dim,
                      const CheckpointExpectation& expect);

// Reads the normalizer (of dimension token_dim) and the weights into `model`.
Normalizer ReadNormalizerAndWeights(ModelArchive& opened, int token_dim,
                                    torch::nn::Module& model);

// Reads the weights of record `name` into `module` and puts it in eval mode.
void ReadModuleWeights(ModelArchive& opened, const std::string& name, torch::nn::Module& module);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_MODEL_ARCHIVE_H_
