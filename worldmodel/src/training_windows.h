// What the world-model trainer and the step distiller share (internal):
// checking their settings and token sequences, drawing windows from them,
// and the EMA of the weights.
#ifndef DFMPC_WORLDMODEL_SRC_TRAINING_WINDOWS_H_
#define DFMPC_WORLDMODEL_SRC_TRAINING_WINDOWS_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/optimizer_options.h"

namespace dfmpc::worldmodel {

class DfTransformerImpl;

// The settings of a run over noisy windows that both option structs hold.
struct WindowTrainingSettings {
  OptimizerOptions optimizer;
  int window;
  double ema_decay, clean_prob, pyramid_prob, known_action_prob;
};

// The settings of a trainer's or a distiller's options.
template <typename Options>
WindowTrainingSettings WindowSettingsOf(const Options& o) {
  return {o, o.window, o.ema_decay, o.clean_prob, o.pyramid_prob, o.known_action_prob};
}

// Throws std::invalid_argument, "<owner>: <what>", for the first impossible
// setting.
void CheckWindowTrainingSettings(const WindowTrainingSettings& settings, const std::string& owner);

// Throws std::invalid_argument, messages starting with `owner` (e.g.
// "Trainer"), when `sequences` is empty, a sequence is not [T, token_dim],
// holds fewer than `window` tokens, or is not finite. `what` names the
// split ("training", "validation").
void CheckTokenSequences(const std::vector<at::Tensor>& sequences, int64_t token_dim,
                         int64_t window, const std::string& owner, const std::string& what);

// [count, window, d]: windows drawn uniformly over every (sequence, start)
// pair, with one draw of `count` integers from `gen`. `picks`, when given,
// receives each window's number among those pairs (sequence by sequence,
// start by start).
at::Tensor SampleWindows(const std::vector<at::Tensor>& sequences, int64_t window, int64_t count,
                         at::Generator& gen, std::vector<int64_t>* picks = nullptr);

// ema = decay * ema + (1 - decay) * model, where the decay of optimizer step
// `step` (0-based) is min(decay, (1 + step) / (10 + step)): short runs would
// otherwise keep too much of where the weights started.
void UpdateEma(DfTransformerImpl& ema, DfTransformerImpl& model, double decay, int step);

// Copies every parameter of `from` into `to` (same architecture).
void CopyWeights(DfTransformerImpl& from, DfTransformerImpl& to);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_TRAINING_WINDOWS_H_
