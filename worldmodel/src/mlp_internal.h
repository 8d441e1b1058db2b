// Pieces shared by the single MLP dynamics model, its ensemble and the
// value model (internal): the JSON record of a model's info, the
// autoregressive rollout of a one-step predictor and the training loop.
#ifndef DFMPC_WORLDMODEL_SRC_MLP_INTERNAL_H_
#define DFMPC_WORLDMODEL_SRC_MLP_INTERNAL_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "dfmpc/worldmodel/mlp_dynamics.h"

namespace dfmpc::worldmodel::internal {

// `info` as metadata of a model file whose "format" is `format`.
nlohmann::json MlpInfoToJson(const MlpModelInfo& info, const char* format);

// Throws nlohmann::json::exception for a missing or mistyped field.
MlpModelInfo MlpInfoFromJson(const nlohmann::json& j);

// Normalized o_{t+1} from the normalized token x_t [B, d] and a_t [B, act].
using OneStep = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

// The H tokens [B, H, d] predicted by `step` from `token` [B, d] on
// `actions` [B, H, act]. Throws std::invalid_argument on other shapes.
at::Tensor RolloutOneStep(const TokenLayout& layout, const at::Tensor& token,
                          const at::Tensor& actions, const OneStep& step);

// Trains `model` for options.steps steps of scheduled AdamW
// (scheduled_adamw.h) on batches of `rows` example rows drawn uniformly by a CPU
// generator seeded with options.seed, so a seed draws the same rows on every
// device. `batch_loss(picks)` is the loss of the rows `picks` (long, on
// `device`). `on_progress(step, loss)` follows every step. Leaves the model
// in eval mode.
void TrainOnRandomRows(torch::nn::Module& model, int64_t rows, c10::Device device,
                       const MlpTrainOptions& options,
                       const std::function<at::Tensor(const at::Tensor&)>& batch_loss,
                       const std::function<void(int, double)>& on_progress);

}  // namespace dfmpc::worldmodel::internal

#endif  // DFMPC_WORLDMODEL_SRC_MLP_INTERNAL_H_
