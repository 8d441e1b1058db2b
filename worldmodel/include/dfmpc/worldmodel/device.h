// Choosing the torch device from a user's string, and moving host data to
// it.
#ifndef DFMPC_WORLDMODEL_DEVICE_H_
#define DFMPC_WORLDMODEL_DEVICE_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <string>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace dfmpc::worldmodel {

// "cpu", "cuda" or "cuda:N". Throws std::invalid_argument for other names and
// when CUDA is asked for but this build of LibTorch or this machine has none.
c10::Device ParseDevice(const std::string& name);

// `host` as `dtype` on `device`. From the CPU to a GPU it goes through
// pinned memory without blocking the host: a copy from pageable memory
// would make the host wait for every kernel queued before it.
at::Tensor ToDevice(const at::Tensor& host, c10::Device device, at::ScalarType dtype);

// Standard normal noise of `sizes` drawn on the CPU with `generator` (a CPU
// generator), so that a seed gives the same numbers on every device, then
// moved to `device` as float.
at::Tensor StandardNormal(at::Generator& generator, at::IntArrayRef sizes, c10::Device device);

// Where a module's parameters are (the CPU for a module without any).
c10::Device ModuleDevice(torch::nn::Module& module);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_DEVICE_H_
