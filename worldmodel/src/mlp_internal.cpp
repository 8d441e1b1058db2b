#include "mlp_internal.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/device.h"
#include "model_archive.h"
#include "scheduled_adamw.h"

namespace dfmpc::worldmodel::internal {

nlohmann::json MlpInfoToJson(const MlpModelInfo& info, const char* format) {
  const MlpDynamicsConfig& c = info.config;
  nlohmann::json header = ProvenanceHeader(info, format);
  header["layout"] = {{"action_dim", c.layout.action_dim},
                      {"observation_dim", c.layout.observation_dim}};
  header["width"] = c.width;
  header["hidden_layers"] = c.hidden_layers;
  return header;
}

MlpModelInfo MlpInfoFromJson(const nlohmann::json& j) {
  MlpModelInfo info;
  static_cast<ModelProvenance&>(info) = ReadProvenance(j);
  info.config.layout.action_dim = j.at("layout").at("action_dim").get<int>();
  info.config.layout.observation_dim = j.at("layout").at("observation_dim").get<int>();
  info.config.width = j.at("width").get<int>();
  info.config.hidden_layers = j.at("hidden_layers").get<int>();
  return info;
}

at::Tensor RolloutOneStep(const TokenLayout& layout, const at::Tensor& token,
                          const at::Tensor& actions, const OneStep& step) {
  if (token.dim() != 2 || token.size(1) != layout.token_dim()) {
    throw std::invalid_argument("MLP rollout: token must be [B, " +
                                std::to_string(layout.token_dim()) + "]");
  }
  if (actions.dim() != 3 || actions.size(0) != token.size(0) ||
      actions.size(2) != layout.action_dim) {
    throw std::invalid_argument("MLP rollout: actions must be [B, H, " +
                                std::to_string(layout.action_dim) + "] with the token's batch");
  }
  std::vector<at::Tensor> tokens;
  at::Tensor current = token;
  for (int64_t h = 0; h < actions.size(1); ++h) {
    const at::Tensor action = actions.select(1, h);
    current = at::cat({action, step(current, action)}, -1);
    tokens.push_back(current);
  }
  return at::stack(tokens, 1);
}

void TrainOnRandomRows(torch::nn::Module& model, int64_t rows, c10::Device device,
                       const MlpTrainOptions& options,
                       const std::function<at::Tensor(const at::Tensor&)>& batch_loss,
                       const std::function<void(int, double)>& on_progress) {
  at::Generator generator = at::detail::createCPUGenerator(options.seed);
  ScheduledAdamW optimizer(model.parameters(), options);
  model.train();
  for (int step = 1; step <= options.steps; ++step) {
    const at::Tensor loss = optimizer.Step(step - 1, [&] {
      return batch_loss(ToDevice(at::randint(rows, {options.batch_size}, generator, at::kLong),
                                 device, at::kLong));
    });
    if (on_progress) on_progress(step, loss.item<double>());
  }
  model.eval();
}

}  // namespace dfmpc::worldmodel::internal
