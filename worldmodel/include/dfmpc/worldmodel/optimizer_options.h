// The optimiser's settings, one struct for every training run of the
// library: the world-model trainer, the step distiller, the MLP dynamics and
// value models, and the frame tokenizer. Each run's options derive from it
// and set their own defaults.
//
// A run takes `steps` AdamW steps on batches of `batch_size` items drawn
// from `seed`. The learning rate rises linearly to its peak over
// `warmup_steps`, then decays along a cosine to `min_learning_rate_ratio` of
// the peak at the last step; before each step the gradients' global norm is clipped to
// `grad_clip` (0: not clipped).
#ifndef DFMPC_WORLDMODEL_OPTIMIZER_OPTIONS_H_
#define DFMPC_WORLDMODEL_OPTIMIZER_OPTIONS_H_

#include <cstdint>
#include <string>

namespace dfmpc::worldmodel {

struct OptimizerOptions {
  int steps = 1000;
  int batch_size = 32;
  double learning_rate = 1e-3;           // the peak, after the warm-up
  double min_learning_rate_ratio = 0.1;  // the cosine decays to this fraction
  int warmup_steps = 0;
  double weight_decay = 0.01;  // AdamW's, decoupled from the gradient
  double grad_clip = 0.0;      // max global gradient norm; 0: no clipping
  uint64_t seed = 0;           // the batches' draws (and what else the run draws)

  // Throws std::invalid_argument, "<owner>: <what>", naming the first
  // impossible setting.
  void Validate(const std::string& owner) const;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_OPTIMIZER_OPTIONS_H_
