#include "dfmpc/worldmodel/device.h"

#include <ATen/ATen.h>
#include <torch/cuda.h>
#include <torch/nn/module.h>

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

at::Tensor ToDevice(const at::Tensor& host, c10::Device device, at::ScalarType dtype) {
  if (!device.is_cuda() || !host.is_cpu()) return host.to(device, dtype);
  return host.to(dtype).pin_memory().to(device, dtype, /*non_blocking=*/true);
}

at::Tensor StandardNormal(at::Generator& generator, at::IntArrayRef sizes, c10::Device device) {
  return ToDevice(at::randn(sizes, generator, at::TensorOptions().dtype(at::kFloat)), device,
                  at::kFloat);
}

c10::Device ModuleDevice(torch::nn::Module& module) {
  const auto parameters = module.parameters();
  return parameters.empty() ? c10::Device(c10::kCPU) : parameters.front().device();
}

}  // namespace dfmpc::worldmodel
