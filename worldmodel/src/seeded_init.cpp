#include "seeded_init.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <mutex>

namespace dfmpc::worldmodel {

GlobalGeneratorRestorer::GlobalGeneratorRestorer() {
  at::Generator global = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(global.mutex());
  state_ = global.get_state();
}

GlobalGeneratorRestorer::~GlobalGeneratorRestorer() {
  at::Generator global = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(global.mutex());
  global.set_state(state_);
}

void InitializeLinearLayers(torch::nn::Module& module, uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  c10::NoGradGuard no_grad;
  // Children only: `module` may be under construction, not yet in the
  // shared_ptr that listing itself needs.
  for (const auto& child : module.modules(/*include_self=*/false)) {
    auto* linear = child->as<torch::nn::Linear>();
    if (linear == nullptr) continue;
    const double bound = 1.0 / std::sqrt(static_cast<double>(linear->weight.size(1)));
    linear->weight.uniform_(-bound, bound, generator);
    if (linear->bias.defined()) linear->bias.uniform_(-bound, bound, generator);
  }
}

}  // namespace dfmpc::worldmodel
