// The frame tokenizer's format name and config as JSON metadata
// (internal): shared by the tokenizer's own files and the video models that
// embed it.
#ifndef DFMPC_WORLDMODEL_SRC_FRAME_TOKENIZER_JSON_H_
#define DFMPC_WORLDMODEL_SRC_FRAME_TOKENIZER_JSON_H_

#include <nlohmann/json.hpp>

#include "dfmpc/worldmodel/frame_tokenizer.h"

namespace dfmpc::worldmodel {

// The format a tokenizer's own file names, and its record in a video model.
inline constexpr char kFrameTokenizerFormat[] = "dfmpc-frame-tokenizer";

nlohmann::json FrameTokenizerConfigToJson(const FrameTokenizerConfig& config);
// Throws nlohmann::json::exception for missing fields.
FrameTokenizerConfig FrameTokenizerConfigFromJson(const nlohmann::json& json);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_FRAME_TOKENIZER_JSON_H_
