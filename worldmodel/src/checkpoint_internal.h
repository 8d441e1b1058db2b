// The pieces of checkpoint.cpp that other model files reuse (internal): the
// transformer's metadata and its reading from an opened archive, shared by
// state models and video models (video_model.h).
#ifndef DFMPC_WORLDMODEL_SRC_CHECKPOINT_INTERNAL_H_
#define DFMPC_WORLDMODEL_SRC_CHECKPOINT_INTERNAL_H_

#include <nlohmann/json.hpp>
#include <string>

#include "dfmpc/worldmodel/checkpoint.h"
#include "model_archive.h"

namespace dfmpc::worldmodel {

nlohmann::json ModelInfoToJson(const ModelInfo& info, const std::string& format);
// Throws nlohmann::json::exception for missing or mistyped fields.
ModelInfo ModelInfoFromJson(const nlohmann::json& json);

// Throws std::invalid_argument when the info, the normalizer and the model
// config disagree.
void CheckSavable(const ModelInfo& info, const Normalizer& normalizer);

// The transformer, its info and normalizer from an archive whose metadata
// is ModelInfoToJson's; throws (FailCheckpoint) as LoadCheckpoint.
Checkpoint ReadCheckpoint(ModelArchive& opened, const CheckpointExpectation& expect);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_CHECKPOINT_INTERNAL_H_
