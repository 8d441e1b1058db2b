// Runs a program to completion and collects what it printed.
#ifndef DFMPC_EXAMPLES_PLOT_SUBPROCESS_H_
#define DFMPC_EXAMPLES_PLOT_SUBPROCESS_H_

#include <string>
#include <vector>

namespace dfmpc::plot {

struct ProcessResult {
  bool exited_normally = false;  // false when killed by a signal
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0], searched in PATH, with stdin from /dev/null. Throws
// std::runtime_error when the program cannot be started.
ProcessResult RunProcess(const std::vector<std::string>& argv);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_SUBPROCESS_H_
