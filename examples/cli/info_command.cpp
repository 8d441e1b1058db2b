// dfmpc info: what a model file holds, whichever kind it is.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "dfmpc/planner/model_task.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "dfmpc/worldmodel/model_file.h"
#include "dfmpc/worldmodel/value_model.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::cli {
namespace {

// Whether the file carries its task's files (`dfmpc task stamp` replaces
// them) or names a built-in task.
std::string TaskFiles(const std::string& task_file) {
  return task_file.empty() ? "none carried: the built-in task of that name"
                           : "carried (task.toml of " + std::to_string(task_file.size()) +
                                 " bytes, and its MJCF)";
}

// `description` with the task files' line before its notes.
std::string WithTaskFiles(std::string description, const std::string& task_file) {
  const std::size_t notes = description.find("notes:");
  description.insert(notes == std::string::npos ? description.size() : notes,
                     "task files:      " + TaskFiles(task_file) + "\n");
  return description;
}

std::string DescribeMlp(const worldmodel::MlpModelInfo& info, const std::string& kind) {
  const worldmodel::MlpDynamicsConfig& c = info.config;
  std::ostringstream out;
  out << "model:           " << kind << ", " << c.hidden_layers << " hidden layers of width "
      << c.width << "\n"
      << "task:            " << info.task << "\n"
      << "task files:      " << TaskFiles(info.task_file) << "\n"
      << "layout:          " << c.layout.action_dim << " action(s), " << c.layout.observation_dim
      << " observation features\n"
      << "format version:  " << info.format_version << " (library " << info.library_version
      << ")\n";
  if (!info.notes.empty()) out << "notes:           " << info.notes << "\n";
  return out.str();
}

std::string DescribeValue(const worldmodel::ValueModelInfo& info) {
  const worldmodel::ValueModelConfig& c = info.config;
  std::ostringstream out;
  out << "model:           value (a critic of the return), " << c.hidden_layers
      << " hidden layers of width " << c.width << ", discount " << c.discount
      << " per control step\n"
      << "task:            " << info.task << "\n"
      << "task files:      " << TaskFiles(info.task_file) << "\n"
      << "observations:    " << c.observation_dim << " features\n"
      << "action repeat:   " << info.action_repeat << " physics steps per control step\n"
      << "format version:  " << info.format_version << " (library " << info.library_version
      << ")\n";
  if (!info.notes.empty()) out << "notes:           " << info.notes << "\n";
  return out.str();
}

std::string Describe(const std::string& path) {
  const std::string format = worldmodel::ModelFileFormat(path);
  if (format == "dfmpc-model") {
    const worldmodel::Checkpoint model = worldmodel::LoadCheckpoint(path);
    // The options Planner::FromFile(path) plans with, and their sources.
    const planner::ResolvedPlannerOptions options = planner::ResolvePlannerOptions(
        planner::ModelTask(model.info, path), model.info.sampling_levels);
    return WithTaskFiles(worldmodel::DescribeCheckpoint(model), model.info.task_file) +
           "planner options (value, source):\n" + planner::FormatResolvedOptions(options);
  }
  if (format == "dfmpc-video-model") {
    const worldmodel::VideoModel model = worldmodel::LoadVideoModel(path);
    return WithTaskFiles(worldmodel::DescribeVideoModel(model), model.world.info.task_file);
  }
  if (format == "dfmpc-value") {
    return DescribeValue(worldmodel::LoadValueModel(path).info);
  }
  if (format == "dfmpc-mlp-dynamics") {
    return DescribeMlp(worldmodel::LoadMlpCheckpoint(path).info, "one-step MLP dynamics");
  }
  if (format == "dfmpc-mlp-ensemble") {
    const worldmodel::MlpEnsembleCheckpoint model = worldmodel::LoadMlpEnsemble(path);
    return DescribeMlp(model.info.model, "MLP dynamics ensemble of " +
                                             std::to_string(model.info.seeds.size()) +
                                             " members (the mlp-mppi peer's)");
  }
  throw std::runtime_error(path + " is a '" + format +
                           "' file; `dfmpc info` describes world, video, value and MLP models "
                           "(a frame tokenizer is described with the video model it is part of)");
}

}  // namespace

void AddInfoCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Print what a model file holds");
  cmd->add_option("model", *path, "model file: world, video, value or MLP model")->required();
  cmd->callback([path] { std::cout << Describe(*path); });
}

}  // namespace dfmpc::cli
