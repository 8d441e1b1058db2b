// Training a world model on datasets, end to end: read the datasets, split
// and normalize their episodes, train, and write the model file (and the
// resume state). What `dfmpc train` and Python's dfmpc.train run.
#ifndef DFMPC_EXAMPLES_PIPELINES_TRAIN_WORLD_MODEL_H_
#define DFMPC_EXAMPLES_PIPELINES_TRAIN_WORLD_MODEL_H_

#include <functional>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/trainer.h"
#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::pipelines {

struct WorldModelJob {
  std::vector<std::string> data;  // dataset files of one task and control rate
  std::string out;                // the model file; "<stem>.state" resumes
  std::string tokenizer;          // a frame tokenizer file: a video model
  bool resume = false;
  bool observation_deltas = true;
  bool known_actions = false;  // the side input of known actions
  // The outcome condition (transformer.h), for classifier-free guidance.
  bool outcome_condition = false;
  // Clean tokens' actions hidden from the model (transformer.h).
  bool hide_context_actions = false;
  double validation_fraction = 0.1;
  double sensor_noise = 0.0;            // std bound of the context's sensor noise
  worldmodel::TransformerConfig model;  // width, depth, heads (sizes are filled in)
  worldmodel::TrainerOptions trainer;
  std::string notes;  // kept in the model file, e.g. the command line
};

struct WorldModelCallbacks {
  // Once the data is read: the model's description and the episode counts.
  std::function<void(const worldmodel::ModelInfo&, size_t train, size_t validation)> on_start;
  std::function<void(const worldmodel::TrainProgress&)> on_progress;
  // After each validation, once the model file is written.
  std::function<void(const std::vector<worldmodel::TrainLogRow>&)> on_log;
};

// "models/pendulum.pt" -> "models/pendulum": the stem the side files share
// (the resume state "<stem>.state", the CLI's loss table and plot).
std::string OutputStem(const std::string& path);

// Runs `job`; returns the log (one row per validation). Throws
// std::invalid_argument for impossible options or data (naming them) and
// what reading the files and training throw. Only rank 0 of a data-parallel
// job writes files.
std::vector<worldmodel::TrainLogRow> TrainWorldModel(WorldModelJob job,
                                                     const WorldModelCallbacks& callbacks = {});

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_TRAIN_WORLD_MODEL_H_
