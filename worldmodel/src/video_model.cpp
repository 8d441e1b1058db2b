#include "dfmpc/worldmodel/video_model.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "checkpoint_internal.h"
#include "frame_tokenizer_json.h"
#include "model_archive.h"

namespace dfmpc::worldmodel {
namespace {

constexpr const char* kFormatName = "dfmpc-video-model";
constexpr const char* kTokenizerRecord = "tokenizer";

}  // namespace

void SaveVideoModel(const std::string& path, const ModelInfo& info, const Normalizer& normalizer,
                    DfTransformerImpl& model, const FrameTokenizerCheckpoint& tokenizer) {
  CheckSavable(info, normalizer);
  const FrameTokenizerConfig& frames = tokenizer.info.config;
  if (info.layout.observation_dim != frames.latent_dim) {
    throw std::invalid_argument("SaveVideoModel: the transformer's observations have " +
                                std::to_string(info.layout.observation_dim) +
                                " features, the tokenizer's latents " +
                                std::to_string(frames.latent_dim));
  }
  nlohmann::json metadata = ModelInfoToJson(info, kFormatName);
  nlohmann::json& record = metadata[kTokenizerRecord];
  record = ProvenanceHeader(tokenizer.info, kFrameTokenizerFormat);
  record["config"] = FrameTokenizerConfigToJson(frames);
  SaveModelArchive(path, metadata, normalizer, model,
                   {{kTokenizerRecord, tokenizer.model.ptr().get()}});
}

VideoModel LoadVideoModel(const std::string& path, const CheckpointExpectation& expect,
                          c10::Device device) {
  ModelArchive opened = OpenModelArchive(
      path, kFormatName, "a dfmpc video model",
      "rollout needs a video model from `dfmpc train --tokenizer` (a state model "
      "predicts observations, not frames)");
  VideoModel video;
  video.world = ReadCheckpoint(opened, expect);
  FrameTokenizerInfo& info = video.tokenizer.info;
  try {
    const nlohmann::json& record = opened.metadata.at(kTokenizerRecord);
    static_cast<ModelProvenance&>(info) = ReadProvenance(record);
    info.config = FrameTokenizerConfigFromJson(record.at("config"));
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt tokenizer metadata: ") + e.what());
  }
  try {
    info.config.Validate();
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(path, std::string("corrupt tokenizer metadata: ") + e.what());
  }
  if (info.task != video.world.info.task ||
      info.config.latent_dim != video.world.info.layout.observation_dim) {
    FailCheckpoint(path, "the tokenizer (task '" + info.task + "', " +
                             std::to_string(info.config.latent_dim) +
                             " latent features) does not fit the transformer (task '" +
                             video.world.info.task + "', " +
                             std::to_string(video.world.info.layout.observation_dim) +
                             " observation features)");
  }
  video.tokenizer.model = FrameAutoencoder(info.config);
  ReadModuleWeights(opened, kTokenizerRecord, *video.tokenizer.model);
  video.world.model->to(device);
  video.tokenizer.model->to(device);
  return video;
}

bool IsVideoModelFile(const std::string& path) {
  try {
    OpenModelArchive(path, kFormatName, "a dfmpc video model");
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

std::string DescribeVideoModel(const VideoModel& model) {
  const FrameTokenizerConfig& frames = model.tokenizer.info.config;
  int64_t parameters = 0;
  for (const auto& p : model.tokenizer.model->parameters()) parameters += p.numel();
  std::ostringstream out;
  out << "video model:     " << frames.width << "x" << frames.height << " RGB frames -> "
      << frames.latent_dim << " latent features (tokenizer: " << frames.channels
      << " base channels, " << parameters << " parameters)\n"
      << DescribeCheckpoint(model.world);
  return out.str();
}

}  // namespace dfmpc::worldmodel
