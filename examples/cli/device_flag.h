// The --device option of every command that runs a model.
#ifndef DFMPC_EXAMPLES_CLI_DEVICE_FLAG_H_
#define DFMPC_EXAMPLES_CLI_DEVICE_FLAG_H_

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

// Adds --device (cpu, cuda or cuda:N; checked when the command runs, with a
// clear error where this LibTorch or machine has no CUDA). `device` holds
// the default.
void AddDeviceFlag(CLI::App& cmd, std::string& device);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_DEVICE_FLAG_H_
