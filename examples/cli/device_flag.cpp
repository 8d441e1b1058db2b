#include "device_flag.h"

#include <CLI/CLI.hpp>

namespace dfmpc::cli {

void AddDeviceFlag(CLI::App& cmd, std::string& device) {
  if (device.empty()) device = "cpu";
  cmd.add_option("--device", device, "torch device: cpu, cuda or cuda:N")->capture_default_str();
}

}  // namespace dfmpc::cli
