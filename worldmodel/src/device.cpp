#include "dfmpc/worldmodel/device.h"

#include <torch/cuda.h>

#include <regex>
#include <stdexcept>

namespace dfmpc::worldmodel {

c10::Device ParseDevice(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (!std::regex_match(name, std::regex("cuda(:[0-9]+)?"))) {
    throw std::invalid_argument("unknown device '" + name + "' (expected cpu, cuda or cuda:N)");
  }
  if (!torch::cuda::is_available()) {
    throw std::invalid_argument("device '" + name +
                                "' requested, but this LibTorch build or machine has no CUDA");
  }
  const c10::Device device(name);
  if (device.has_index() && device.index() >= static_cast<int>(torch::cuda::device_count())) {
    throw std::invalid_argument("device '" + name + "' does not exist: " +
                                std::to_string(torch::cuda::device_count()) +
                                " CUDA device(s) present");
  }
  return device;
}

}  // namespace dfmpc::worldmodel
