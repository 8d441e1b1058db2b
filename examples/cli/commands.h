// Registration of the `dfmpc` tool's subcommands. Each Add*Command function
// lives in its own file and attaches one subcommand (with its options and its
// callback) to the parent it is given.
#ifndef DFMPC_EXAMPLES_CLI_COMMANDS_H_
#define DFMPC_EXAMPLES_CLI_COMMANDS_H_

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

void AddScheduleCommand(CLI::App& app);       // dfmpc schedule
void AddBenchCacheCommand(CLI::App& bench);   // dfmpc bench cache
void AddCollectCommand(CLI::App& app);        // dfmpc collect
void AddEvalCommand(CLI::App& app);           // dfmpc eval
void AddReportCommand(CLI::App& app);         // dfmpc report
void AddDocsCommand(CLI::App& app);           // dfmpc docs
void AddBenchRenderCommand(CLI::App& bench);  // dfmpc bench render
void AddInfoCommand(CLI::App& app);           // dfmpc info
void AddTaskCommand(CLI::App& app);           // dfmpc task check | new
void AddTuneCommand(CLI::App& app);           // dfmpc tune
// `command_line` is recorded in the model's notes.
void AddTrainCommand(CLI::App& app, const std::string& command_line);  // dfmpc train
// `command_line` is recorded in the model's notes.
void AddTrainMlpCommand(CLI::App& app, const std::string& command_line);    // dfmpc train-mlp
void AddTrainValueCommand(CLI::App& app, const std::string& command_line);  // dfmpc train-value
// `command_line` is recorded in the student's notes.
void AddDistillCommand(CLI::App& app, const std::string& command_line);  // dfmpc distill
// `command_line` is recorded in the tokenizer's notes.
void AddTrainFramesCommand(CLI::App& app, const std::string& command_line);  // dfmpc train-frames
void AddEvalModelCommand(CLI::App& app);                                     // dfmpc eval-model
void AddControlCommand(CLI::App& app);                                       // dfmpc control
void AddBenchMpcCommand(CLI::App& bench);                                    // dfmpc bench mpc
void AddBenchCostCommand(CLI::App& bench);                                   // dfmpc bench cost
void AddBenchDeadlineCommand(CLI::App& bench);                               // dfmpc bench deadline
void AddBenchSoakCommand(CLI::App& bench);                                   // dfmpc bench soak
void AddBenchStallsCommand(CLI::App& bench);                                 // dfmpc bench stalls
void AddRolloutCommand(CLI::App& app);                                       // dfmpc rollout
void AddBenchRolloutCommand(CLI::App& bench);                                // dfmpc bench rollout

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_COMMANDS_H_
