// The header every model file holds whatever its kind (model_archive.h's
// ProvenanceHeader and ReadProvenance), and every shipped model loading
// with the header its file holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "dfmpc/worldmodel/value_model.h"
#include "dfmpc/worldmodel/video_model.h"
#include "model_archive.h"

namespace dfmpc::worldmodel {
namespace {

void ExpectSameProvenance(const ModelProvenance& found, const ModelProvenance& expected,
                          const std::string& where) {
  EXPECT_EQ(found.task, expected.task) << where;
  EXPECT_EQ(found.task_file, expected.task_file) << where;
  EXPECT_EQ(found.task_mjcf, expected.task_mjcf) << where;
  EXPECT_EQ(found.notes, expected.notes) << where;
  EXPECT_EQ(found.format_version, expected.format_version) << where;
  EXPECT_EQ(found.library_version, expected.library_version) << where;
}

ModelProvenance SomeProvenance() {
  ModelProvenance provenance;
  provenance.task = "hopper";
  provenance.task_file = "[planner]\nhorizon = 16\n";
  provenance.task_mjcf = "<mujoco/>";
  provenance.notes = "dfmpc train --steps 10";
  provenance.library_version = "9.8.7";
  return provenance;
}

TEST(ModelHeaderTest, ProvenanceRoundTripsWithTheFormat) {
  const ModelProvenance provenance = SomeProvenance();
  const nlohmann::json header = ProvenanceHeader(provenance, "dfmpc-value");
  EXPECT_EQ(header.at("format"), "dfmpc-value");
  ExpectSameProvenance(ReadProvenance(header), provenance, "round trip");
}

TEST(ModelHeaderTest, OlderHeadersReadAndMissingFieldsThrow) {
  nlohmann::json header = ProvenanceHeader(SomeProvenance(), "dfmpc-frame-tokenizer");
  // Written before models carried their task's files, or before a video
  // model's tokenizer record had the whole header.
  for (const char* optional : {"task_file", "task_mjcf", "format_version"}) header.erase(optional);
  const ModelProvenance older = ReadProvenance(header);
  EXPECT_EQ(older.task, "hopper");
  EXPECT_EQ(older.task_file, "");
  EXPECT_EQ(older.task_mjcf, "");
  EXPECT_EQ(older.format_version, kCheckpointFormatVersion);
  for (const char* required : {"task", "notes", "library_version"}) {
    nlohmann::json lacking = header;
    lacking.erase(required);
    EXPECT_THROW(ReadProvenance(lacking), nlohmann::json::exception) << required;
  }
}

// Loads `path` with its kind's loader and returns what the loader read.
ModelProvenance LoadedProvenance(const std::string& path, const std::string& format) {
  if (format == "dfmpc-model") return LoadCheckpoint(path).info;
  if (format == "dfmpc-mlp-ensemble") return LoadMlpEnsemble(path).info.model;
  if (format == "dfmpc-mlp-dynamics") return LoadMlpCheckpoint(path).info;
  if (format == "dfmpc-value") return LoadValueModel(path).info;
  if (format == "dfmpc-video-model") {
    const VideoModel video = LoadVideoModel(path);
    EXPECT_EQ(video.tokenizer.info.task, video.world.info.task) << path;
    EXPECT_FALSE(video.tokenizer.info.library_version.empty()) << path;
    return video.world.info;
  }
  ADD_FAILURE() << path << ": unknown format '" << format << "'";
  return {};
}

TEST(ModelHeaderTest, EveryShippedModelLoadsWithTheHeaderItsFileHolds) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(DFMPC_SHIPPED_MODELS_DIR)) {
    if (entry.path().extension() == ".pt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, int> kinds;
  for (const std::filesystem::path& file : files) {
    const std::string path = file.string();
    const nlohmann::json header = OpenAnyModelArchive(path).metadata;
    const std::string format = header.at("format").get<std::string>();
    ++kinds[format];
    const ModelProvenance loaded = LoadedProvenance(path, format);
    ExpectSameProvenance(loaded, ReadProvenance(header), path);
    // Files are named after their task: cartpole_swingup_k16.pt is one.
    EXPECT_EQ(file.stem().string().rfind(loaded.task, 0), 0u) << path << ": task " << loaded.task;
    EXPECT_FALSE(loaded.notes.empty()) << path;
  }
  EXPECT_GE(files.size(), 20u);
  for (const char* kind :
       {"dfmpc-model", "dfmpc-mlp-ensemble", "dfmpc-value", "dfmpc-video-model"}) {
    EXPECT_GT(kinds[kind], 0) << "no shipped " << kind;
  }
}

}  // namespace
}  // namespace dfmpc::worldmodel
