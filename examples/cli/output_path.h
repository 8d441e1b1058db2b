// A CLI11 check for output file options, so that a typo in a directory is
// reported when the command line is parsed, not after minutes of training
// or evaluation when the first file is written.
#ifndef DFMPC_EXAMPLES_CLI_OUTPUT_PATH_H_
#define DFMPC_EXAMPLES_CLI_OUTPUT_PATH_H_

#include <CLI/CLI.hpp>

namespace dfmpc::cli {

// Passes when the file's directory (the working directory for a bare name)
// exists and is writable; the file itself need not exist.
const CLI::Validator& OutputFileInExistingDirectory();

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_OUTPUT_PATH_H_
