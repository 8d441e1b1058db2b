#include "command_line.h"

namespace dfmpc::cli {
namespace {

std::string WithoutDirectories(const std::string& argument) {
  const std::size_t equals = argument.find('=');
  const std::size_t start = equals == std::string::npos ? 0 : equals + 1;
  if (argument.compare(start, 1, "/") != 0) return argument;
  return argument.substr(0, start) + argument.substr(argument.rfind('/') + 1);
}

}  // namespace

std::string PortableCommandLine(int argc, const char* const* argv) {
  std::string line = "dfmpc";
  for (int i = 1; i < argc; ++i) line += " " + WithoutDirectories(argv[i]);
  return line;
}

}  // namespace dfmpc::cli
