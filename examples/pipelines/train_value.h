// Training a state-value critic (dfmpc/worldmodel/value_model.h) on
// datasets, end to end, as `dfmpc train-value` runs it.
#ifndef DFMPC_EXAMPLES_PIPELINES_TRAIN_VALUE_H_
#define DFMPC_EXAMPLES_PIPELINES_TRAIN_VALUE_H_

#include <functional>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/mlp_dynamics.h"
#include "dfmpc/worldmodel/value_model.h"

namespace dfmpc::pipelines {

struct ValueJob {
  std::vector<std::string> data;  // dataset files of one task and control rate
  std::string out;
  double validation_fraction = 0.1;
  std::string device = "cpu";
  worldmodel::ValueModelConfig config;  // observation_dim comes from the data
  // 3000 steps of batch 256: 5 to 8 s on one thread for the shipped tasks'
  // data (docs/experiments.md, A value beyond the plan).
  worldmodel::MlpTrainOptions trainer = [] {
    worldmodel::MlpTrainOptions options;
    options.steps = 3000;
    return options;
  }();
  std::string notes;  // kept in the model file
};

struct ValueCallbacks {
  // Once the data is read: the task, the episode counts and the examples
  // (steps kept) that train.
  std::function<void(const std::string& task, size_t train, size_t validation, long long rows)>
      on_start;
  std::function<void(int step, double loss)> on_progress;
};

struct ValueResult {
  double untrained_loss = 0.0;  // validation mean squared error before training
  double loss = 0.0;            // and after
  double constant_loss = 0.0;   // of predicting the training targets' mean
};

// Runs `job` and writes its file. Throws std::invalid_argument for
// impossible options or data (naming them) and what reading and training
// throw.
ValueResult TrainValue(const ValueJob& job, const ValueCallbacks& callbacks = {});

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_TRAIN_VALUE_H_
