// Training the one-step MLP dynamics baseline (one MLP or an ensemble) on
// datasets, end to end, as `dfmpc train-mlp` and Python's dfmpc.train_mlp
// run it.
#ifndef DFMPC_EXAMPLES_PIPELINES_TRAIN_MLP_H_
#define DFMPC_EXAMPLES_PIPELINES_TRAIN_MLP_H_

#include <functional>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/mlp_dynamics.h"

namespace dfmpc::pipelines {

struct MlpJob {
  std::vector<std::string> data;  // dataset files of one task and control rate
  std::string out;
  std::string tokenizer;  // a frame tokenizer file: train on frame latents
  double validation_fraction = 0.1;
  std::string device = "cpu";
  int ensemble = 0;  // 0: one MLP in a single-model file; E: E members, seeds seed ..
  worldmodel::MlpTrainOptions trainer;
  std::string notes;  // kept in the model file
};

struct MlpCallbacks {
  // Once the data is read: the task, the episode counts, the token size.
  std::function<void(const std::string& task, size_t train, size_t validation, int features)>
      on_start;
  // After every step of member `member` (0-based).
  std::function<void(int member, int step, double loss)> on_progress;
};

struct MlpResult {
  double untrained_loss = 0.0;  // validation loss of the first member before training
  double best_loss = 0.0;       // the members' validation losses after training
  double worst_loss = 0.0;
  int members = 1;
};

// Runs `job` and writes its file. Throws std::invalid_argument for
// impossible options or data (naming them) and what reading and training
// throw.
MlpResult TrainMlp(const MlpJob& job, const MlpCallbacks& callbacks = {});

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_TRAIN_MLP_H_
