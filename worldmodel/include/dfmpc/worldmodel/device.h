// Choosing the torch device from a user's string.
#ifndef DFMPC_WORLDMODEL_DEVICE_H_
#define DFMPC_WORLDMODEL_DEVICE_H_

#include <c10/core/Device.h>

#include <string>

namespace dfmpc::worldmodel {

// "cpu", "cuda" or "cuda:N". Throws std::invalid_argument for other names and
// when CUDA is asked for but this build of LibTorch or this machine has none.
c10::Device ParseDevice(const std::string& name);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_DEVICE_H_
