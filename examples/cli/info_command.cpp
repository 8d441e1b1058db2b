// dfmpc info: what a model checkpoint holds.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "dfmpc/worldmodel/checkpoint.h"

namespace dfmpc::cli {

void AddInfoCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Print what a model checkpoint holds");
  cmd->add_option("model", *path, "model checkpoint file")->required();
  cmd->callback([path] {
    std::cout << worldmodel::DescribeCheckpoint(worldmodel::LoadCheckpoint(*path));
  });
}

}  // namespace dfmpc::cli
