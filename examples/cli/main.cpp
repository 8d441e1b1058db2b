// The `dfmpc` command-line tool: one binary, one subcommand per job.
#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "command_line.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"dfmpc: plan robot actions with a diffusion-forcing world model"};
  app.require_subcommand(1);
  app.set_version_flag("--version", DFMPC_VERSION);

  dfmpc::cli::AddScheduleCommand(app);
  dfmpc::cli::AddCollectCommand(app);
  dfmpc::cli::AddEvalCommand(app);
  dfmpc::cli::AddReportCommand(app);
  dfmpc::cli::AddDocsCommand(app);
  const std::string command_line = dfmpc::cli::PortableCommandLine(argc, argv);
  dfmpc::cli::AddTrainCommand(app, command_line);
  dfmpc::cli::AddTrainMlpCommand(app, command_line);
  dfmpc::cli::AddTrainValueCommand(app, command_line);
  dfmpc::cli::AddDistillCommand(app, command_line);
  dfmpc::cli::AddTrainFramesCommand(app, command_line);
  dfmpc::cli::AddEvalModelCommand(app);
  dfmpc::cli::AddControlCommand(app);
  dfmpc::cli::AddRolloutCommand(app);
  dfmpc::cli::AddInfoCommand(app);
  dfmpc::cli::AddTaskCommand(app);
  dfmpc::cli::AddTuneCommand(app);

  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print tables and write CSV");
  bench->require_subcommand(1);
  dfmpc::cli::AddBenchCacheCommand(*bench);
  dfmpc::cli::AddBenchRenderCommand(*bench);
  dfmpc::cli::AddBenchMpcCommand(*bench);
  dfmpc::cli::AddBenchCostCommand(*bench);
  dfmpc::cli::AddBenchDeadlineCommand(*bench);
  dfmpc::cli::AddBenchSoakCommand(*bench);
  dfmpc::cli::AddBenchStallsCommand(*bench);
  dfmpc::cli::AddBenchRolloutCommand(*bench);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Bad command lines read like every other error: one line, status 1.
    std::cerr << "dfmpc: error: " << e.what() << " (see --help)\n";
    return 1;
  } catch (const c10::Error& e) {
    // LibTorch errors carry a C++ backtrace; users need only the message.
    std::cerr << "dfmpc: error: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "dfmpc: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
