// dfmpc schedule: prints a scheduling matrix, one row per line.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "commands.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::cli {

void AddScheduleCommand(CLI::App& app) {
  struct Options {
    std::string kind = "pyramid";
    int steps = 10;
    int horizon = 8;
    double uncertainty = 1.0;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "schedule",
      "Print a scheduling matrix: one row per sampling call (noise level of every token "
      "before the call), integers separated by single spaces");
  cmd->add_option("--kind", options->kind, "pyramid, full_sequence, autoregressive or trapezoid")
      ->capture_default_str();
  cmd->add_option("--steps,-K", options->steps, "sampling levels K (level K is pure noise)")
      ->capture_default_str();
  cmd->add_option("--horizon,-H", options->horizon, "generated tokens H")->capture_default_str();
  cmd->add_option("--uncertainty,-u", options->uncertainty,
                  "uncertainty scale u (pyramid, trapezoid)")
      ->capture_default_str();
  cmd->callback([options] {
    const worldmodel::SchedulingMatrix matrix = worldmodel::MakeSchedulingMatrix(
        worldmodel::ParseScheduleKind(options->kind), options->steps, options->horizon,
        options->uncertainty);
    std::string out;
    for (int m = 0; m < matrix.rows(); ++m) {
      for (int t = 0; t < matrix.horizon(); ++t) {
        if (t > 0) out += ' ';
        out += std::to_string(matrix.level(m, t));
      }
      out += '\n';
    }
    std::cout << out;
  });
}

}  // namespace dfmpc::cli
