// `dfmpc tune`: the planner options for a task, found by the Python
// package's tuner (python/dfmpc/tuning), which drives Optuna over the
// Python module. Every argument after `tune` is the tuner's, --help too.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "commands.h"

namespace dfmpc::cli {
namespace {

namespace fs = std::filesystem;

// The build tree's package when this tool runs from the build that made it;
// else python3 finds the installed one.
void UseBuildPackage() {
  const fs::path package = fs::path(DFMPC_BUILD_PYTHON_DIR) / "dfmpc";
  if (!fs::exists(package / "tuning" / "__main__.py")) return;
  const char* old_path = std::getenv("PYTHONPATH");
  std::string path = DFMPC_BUILD_PYTHON_DIR;
  if (old_path != nullptr && *old_path != '\0') path += std::string(":") + old_path;
  setenv("PYTHONPATH", path.c_str(), 1);
}

[[noreturn]] void RunTuner(const std::vector<std::string>& arguments) {
  UseBuildPackage();
  setenv("OMP_NUM_THREADS", "1", 0);  // each trial's process plans on one thread
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  std::vector<std::string> words = {DFMPC_PYTHON, "-m", "dfmpc.tuning"};
  if (!error) words.insert(words.end(), {"--tool", self.string()});
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(argv[0], argv.data());
  throw std::runtime_error(std::string("tune: cannot run ") + DFMPC_PYTHON + ": " +
                           std::strerror(errno) + " (the tuner is Python: python3 with "
                           "python3-optuna, as scripts/setup.sh installs)");
}

}  // namespace

void AddTuneCommand(CLI::App& app) {
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Find a task's planner options with Optuna on held-out episodes under a latency budget "
      "(`dfmpc tune --help` lists its options)");
  tune->prefix_command();  // everything after `tune` is the tuner's
  tune->set_help_flag();   // the tuner answers --help
  tune->callback([tune] {
    // remaining() keeps the arguments in order for a prefix command.
    RunTuner(tune->remaining());
  });
}

}  // namespace dfmpc::cli
