// The command line a model records in its notes.
#ifndef DFMPC_EXAMPLES_CLI_COMMAND_LINE_H_
#define DFMPC_EXAMPLES_CLI_COMMAND_LINE_H_

#include <string>

namespace dfmpc::cli {

// "dfmpc <arguments>", with every absolute path (also in "--option=/path")
// reduced to its file name: a model file names no directory of the machine
// it was trained on.
std::string PortableCommandLine(int argc, const char* const* argv);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_COMMAND_LINE_H_
