// Registration of the `dfmpc` tool's subcommands. Each Add*Command function
// lives in its own file and attaches one subcommand (with its options and its
// callback) to the parent it is given.
#ifndef DFMPC_EXAMPLES_CLI_COMMANDS_H_
#define DFMPC_EXAMPLES_CLI_COMMANDS_H_

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

void AddScheduleCommand(CLI::App& app);      // dfmpc schedule
void AddBenchCacheCommand(CLI::App& bench);  // dfmpc bench cache
void AddCollectCommand(CLI::App& app);        // dfmpc collect
void AddEvalCommand(CLI::App& app);           // dfmpc eval
void AddBenchRenderCommand(CLI::App& bench);  // dfmpc bench render

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_COMMANDS_H_
