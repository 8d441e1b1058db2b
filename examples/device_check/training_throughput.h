// Training throughput of the world model on a device.
#ifndef DFMPC_EXAMPLES_DEVICE_CHECK_TRAINING_THROUGHPUT_H_
#define DFMPC_EXAMPLES_DEVICE_CHECK_TRAINING_THROUGHPUT_H_

#include <string>

#include "dfmpc/worldmodel/transformer.h"

namespace dfmpc::device_check {

struct TrainingRequest {
  worldmodel::TransformerConfig config;  // token_dim is set by the data
  std::string device;
  bool mixed_precision = false;
  int batch = 32;
  int window = 64;
  int steps = 40;  // the first 5 warm up and are not timed
};

struct TrainingResult {
  double tokens_per_second = 0.0;
  double validation_loss = 0.0;  // after the steps
  long long parameters = 0;
};

// Trains a fresh model on synthetic trajectories of damped oscillators
// driven by random actions (learnable dynamics, no dataset file needed).
TrainingResult MeasureTraining(const TrainingRequest& request);

}  // namespace dfmpc::device_check

#endif  // DFMPC_EXAMPLES_DEVICE_CHECK_TRAINING_THROUGHPUT_H_
