#include "dfmpc/worldmodel/checkpoint.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "checkpoint_internal.h"
#include "model_archive.h"

namespace dfmpc::worldmodel {
namespace {

constexpr const char* kFormatName = "dfmpc-model";

std::string BetaName(BetaSchedule beta) { return beta == BetaSchedule::kLinear ? "linear" : "cosine"; }

std::string OutcomeDescription(const TransformerConfig& c) {
  if (!c.outcome_input) return "unconditioned";
  if (!c.outcome_guidance_input()) return "conditioned (classifier-free guidance)";
  std::ostringstream text;
  text << "conditioned, guidance in one call (CFG-aware, weights 0 to " << c.max_outcome_guidance
       << ")";
  return text.str();
}

}  // namespace

nlohmann::json ModelInfoToJson(const ModelInfo& info, const std::string& format) {
  const TransformerConfig& c = info.config;
  nlohmann::json header = ProvenanceHeader(info, format);
  header["layout"] = {{"action_dim", info.layout.action_dim},
                      {"observation_dim", info.layout.observation_dim},
                      {"observation_deltas", info.layout.observation_deltas}};
  header["config"] = {{"token_dim", c.token_dim},
                      {"width", c.width},
                      {"depth", c.depth},
                      {"heads", c.heads},
                      {"mlp_ratio", c.mlp_ratio},
                      {"max_positions", c.max_positions},
                      {"num_timesteps", c.num_timesteps},
                      {"action_input_dim", c.action_input_dim},
                      {"outcome_input", c.outcome_input},
                      {"max_outcome_guidance", c.max_outcome_guidance},
                      {"hidden_clean_actions", c.hidden_clean_actions}};
  header["num_timesteps"] = info.num_timesteps;
  header["beta_schedule"] = BetaName(info.beta);
  header["prediction"] = PredictionName(info.prediction);
  header["train_window"] = info.train_window;
  header["action_repeat"] = info.action_repeat;
  header["sampling_levels"] = info.sampling_levels;
  return header;
}

ModelInfo ModelInfoFromJson(const nlohmann::json& j) {
  ModelInfo info;
  static_cast<ModelProvenance&>(info) = ReadProvenance(j);
  info.layout.action_dim = j.at("layout").at("action_dim").get<int>();
  info.layout.observation_dim = j.at("layout").at("observation_dim").get<int>();
  info.layout.observation_deltas = j.at("layout").at("observation_deltas").get<bool>();
  const auto& c = j.at("config");
  info.config.token_dim = c.at("token_dim").get<int>();
  info.config.width = c.at("width").get<int>();
  info.config.depth = c.at("depth").get<int>();
  info.config.heads = c.at("heads").get<int>();
  info.config.mlp_ratio = c.at("mlp_ratio").get<int>();
  info.config.max_positions = c.at("max_positions").get<int>();
  info.config.num_timesteps = c.at("num_timesteps").get<int>();
  // Absent in files written before the known-action input existed.
  info.config.action_input_dim = c.value("action_input_dim", 0);
  // Absent in files written before outcome conditioning.
  info.config.outcome_input = c.value("outcome_input", false);
  // Absent in files written before CFG-aware distillation.
  info.config.max_outcome_guidance = c.value("max_outcome_guidance", 0.0);
  // Absent in files written before context actions could be hidden.
  info.config.hidden_clean_actions = c.value("hidden_clean_actions", 0);
  info.num_timesteps = j.at("num_timesteps").get<int>();
  info.beta = ParseBetaSchedule(j.at("beta_schedule").get<std::string>());
  info.prediction = ParsePrediction(j.at("prediction").get<std::string>());
  info.train_window = j.at("train_window").get<int>();
  // Absent in files written before control rates were recorded: all of
  // those were trained on one physics step per control step.
  info.action_repeat = j.value("action_repeat", 1);
  // Absent in files written before distillation: any K.
  info.sampling_levels = j.value("sampling_levels", 0);
  return info;
}

const char* LibraryVersion() { return DFMPC_VERSION; }

void CheckSavable(const ModelInfo& info, const Normalizer& normalizer) {
  if (info.action_repeat < 1) {
    throw std::invalid_argument("SaveCheckpoint: action_repeat must be >= 1");
  }
  if (info.sampling_levels < 0 || info.sampling_levels > info.num_timesteps) {
    throw std::invalid_argument("SaveCheckpoint: sampling_levels must be in [0, num_timesteps]");
  }
  if (normalizer.dim() != info.config.token_dim ||
      info.layout.token_dim() != info.config.token_dim) {
    throw std::invalid_argument(
        "SaveCheckpoint: normalizer, layout and model token dimensions differ");
  }
  if (info.config.action_input_dim != 0 &&
      info.config.action_input_dim != info.layout.action_dim) {
    throw std::invalid_argument("SaveCheckpoint: the known-action input must be 0 or the "
                                "layout's action size");
  }
}

void SaveCheckpoint(const std::string& path, const ModelInfo& info, const Normalizer& normalizer,
                    DfTransformerImpl& model) {
  CheckSavable(info, normalizer);
  SaveModelArchive(path, ModelInfoToJson(info, kFormatName), normalizer, model);
}

Checkpoint ReadCheckpoint(ModelArchive& opened, const CheckpointExpectation& expect) {
  const std::string& path = opened.path;
  Checkpoint checkpoint;
  try {
    checkpoint.info = ModelInfoFromJson(opened.metadata);
  } catch (const nlohmann::json::exception& e) {
    FailCheckpoint(path, std::string("corrupt metadata: ") + e.what());
  }
  if (checkpoint.info.action_repeat < 1) {
    FailCheckpoint(path, "corrupt metadata: action_repeat " +
                             std::to_string(checkpoint.info.action_repeat) + " is not >= 1");
  }
  const int levels = checkpoint.info.sampling_levels;
  if (levels < 0 || levels > checkpoint.info.num_timesteps) {
    FailCheckpoint(path, "corrupt metadata: sampling_levels " + std::to_string(levels) +
                             " is outside [0, " + std::to_string(checkpoint.info.num_timesteps) +
                             "]");
  }
  const int action_input = checkpoint.info.config.action_input_dim;
  if (action_input != 0 && action_input != checkpoint.info.layout.action_dim) {
    FailCheckpoint(path, "corrupt metadata: known-action input of " + std::to_string(action_input) +
                             " features for " + std::to_string(checkpoint.info.layout.action_dim) +
                             " action features");
  }
  CheckExpectation(path, checkpoint.info.task, checkpoint.info.config.token_dim, expect);
  try {
    checkpoint.model = DfTransformer(checkpoint.info.config);
  } catch (const std::invalid_argument& e) {
    FailCheckpoint(path, e.what());
  }
  checkpoint.normalizer =
      ReadNormalizerAndWeights(opened, checkpoint.info.config.token_dim, *checkpoint.model);
  return checkpoint;
}

Checkpoint LoadCheckpoint(const std::string& path, const CheckpointExpectation& expect,
                          c10::Device device) {
  ModelArchive opened =
      OpenModelArchive(path, kFormatName, "a dfmpc model file",
                       "a video model (dfmpc-video-model) is for `dfmpc rollout`, not planning");
  Checkpoint checkpoint = ReadCheckpoint(opened, expect);
  checkpoint.model->to(device);
  return checkpoint;
}

int SamplingLevels(const ModelInfo& info, int asked) {
  const int own = info.sampling_levels;
  if (asked == 0) return own > 0 ? own : 16;
  if (own > 0 && asked != own) {
    throw std::invalid_argument("the model was distilled to sample with K = " +
                                std::to_string(own) + " levels, not K = " +
                                std::to_string(asked));
  }
  return asked;
}

std::string DescribeCheckpoint(const Checkpoint& checkpoint) {
  const ModelInfo& info = checkpoint.info;
  const TransformerConfig& c = info.config;
  int64_t parameters = 0;
  for (const auto& p : checkpoint.model->parameters()) parameters += p.numel();
  std::ostringstream out;
  out << "task:            " << info.task << "\n"
      << "token layout:    [a_{t-1} (" << info.layout.action_dim << "), o_t ("
      << info.layout.observation_dim << ")"
      << (info.layout.observation_deltas ? ", o_t - o_{t-1}" : "") << "] = " << c.token_dim
      << " features\n"
      << "transformer:     width " << c.width << ", depth " << c.depth << ", heads " << c.heads
      << ", mlp ratio " << c.mlp_ratio << ", max positions " << c.max_positions << "\n"
      << "known actions:   " << (c.action_input_dim > 0 ? "clean side input" : "inpainting only")
      << "\n"
      << "outcome:         " << OutcomeDescription(c) << "\n"
      << "parameters:      " << parameters << "\n"
      << "noise:           " << BetaName(info.beta) << " schedule, " << info.num_timesteps
      << " timesteps, predicts " << PredictionName(info.prediction) << "\n"
      << "train window:    " << info.train_window << " tokens\n"
      << "action repeat:   " << info.action_repeat << " physics steps per control step\n"
      << "sampling levels: "
      << (info.sampling_levels > 0 ? "K = " + std::to_string(info.sampling_levels) + " (distilled)"
                                   : std::string("any K"))
      << "\n"
      << "format version:  " << info.format_version << " (library " << info.library_version
      << ")\n";
  if (!info.notes.empty()) out << "notes:           " << info.notes << "\n";
  return out.str();
}

}  // namespace dfmpc::worldmodel
