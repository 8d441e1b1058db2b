#include "task_stamp.h"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

#include "dfmpc/envs/env.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "dfmpc/worldmodel/model_file.h"
#include "dfmpc/worldmodel/value_model.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::cli {
namespace {

namespace fs = std::filesystem;

// The fields every task-carrying model info has, and what it was trained on.
struct CarriedTaskFields {
  std::string* task;
  std::string* task_file;
  std::string* task_mjcf;
  std::string* notes;
  int observation_dim;  // 0: not compared (a video model's latents)
  int action_dim;       // 0: the model takes no actions (a value model)
};

void CheckDimension(const std::string& what, int model, int task, const std::string& model_path,
                    const std::string& task_name) {
  if (model > 0 && model != task) {
    throw std::invalid_argument(model_path + " was trained on " + std::to_string(model) + " " +
                                what + ", task '" + task_name + "' (its current files) has " +
                                std::to_string(task) +
                                ": stamping would plan with features the model never saw; "
                                "retrain on data collected from these files");
  }
}

bool IsBuiltin(const task::TaskSpec& task) {
  std::error_code error;
  const fs::path builtin = fs::path(task::BuiltinTaskDirectory()) / task.name;
  return fs::equivalent(builtin, task.directory, error) && !error;
}

// Checks `task` against the model and overwrites the carried fields.
void Stamp(const CarriedTaskFields& carried, const task::TaskSpec& task,
           const std::string& model_path) {
  if (*carried.task != task.name) {
    throw std::invalid_argument(model_path + " is a model of task '" + *carried.task +
                                "', not of '" + task.name + "' (" + task.file + ")");
  }
  const auto env = envs::MakeEnv(task);
  CheckDimension("observation features", carried.observation_dim, env->observation_spec().size(),
                 model_path, task.name);
  CheckDimension("action components", carried.action_dim, env->action_spec().size(), model_path,
                 task.name);
  *carried.task_file = task.toml_text;
  *carried.task_mjcf = task.mjcf_text;
  *carried.notes += (carried.notes->empty() ? "" : "; then ") + std::string("dfmpc task stamp ") +
                    (IsBuiltin(task) ? task.name : task.directory);
}

}  // namespace

std::string StampTask(const std::string& model_path, const task::TaskSpec& task,
                      const std::string& out_path) {
  const std::string format = worldmodel::ModelFileFormat(model_path);
  if (format == "dfmpc-model") {
    worldmodel::Checkpoint model = worldmodel::LoadCheckpoint(model_path);
    worldmodel::ModelInfo& info = model.info;
    Stamp({&info.task, &info.task_file, &info.task_mjcf, &info.notes, info.layout.observation_dim,
           info.layout.action_dim},
          task, model_path);
    worldmodel::SaveCheckpoint(out_path, info, model.normalizer, *model.model);
  } else if (format == "dfmpc-video-model") {
    worldmodel::VideoModel model = worldmodel::LoadVideoModel(model_path);
    worldmodel::ModelInfo& info = model.world.info;
    Stamp({&info.task, &info.task_file, &info.task_mjcf, &info.notes, 0, info.layout.action_dim},
          task, model_path);
    worldmodel::SaveVideoModel(out_path, info, model.world.normalizer, *model.world.model,
                               model.tokenizer);
  } else if (format == "dfmpc-value") {
    worldmodel::ValueCheckpoint model = worldmodel::LoadValueModel(model_path);
    worldmodel::ValueModelInfo& info = model.info;
    Stamp(
        {&info.task, &info.task_file, &info.task_mjcf, &info.notes, info.config.observation_dim, 0},
        task, model_path);
    worldmodel::SaveValueModel(out_path, info, model.normalizer, *model.model);
  } else if (format == "dfmpc-mlp-dynamics") {
    worldmodel::MlpCheckpoint model = worldmodel::LoadMlpCheckpoint(model_path);
    worldmodel::MlpModelInfo& info = model.info;
    Stamp({&info.task, &info.task_file, &info.task_mjcf, &info.notes,
           info.config.layout.observation_dim, info.config.layout.action_dim},
          task, model_path);
    worldmodel::SaveMlpCheckpoint(out_path, info, model.normalizer, *model.model);
  } else if (format == "dfmpc-mlp-ensemble") {
    worldmodel::MlpEnsembleCheckpoint model = worldmodel::LoadMlpEnsemble(model_path);
    worldmodel::MlpModelInfo& info = model.info.model;
    Stamp({&info.task, &info.task_file, &info.task_mjcf, &info.notes,
           info.config.layout.observation_dim, info.config.layout.action_dim},
          task, model_path);
    worldmodel::SaveMlpEnsemble(out_path, model.info, model.normalizer, *model.ensemble);
  } else {
    throw std::runtime_error(model_path + " is a '" + format +
                             "' file, which carries no task (a frame tokenizer is stamped "
                             "through the video model it is part of)");
  }
  return format;
}

}  // namespace dfmpc::cli
