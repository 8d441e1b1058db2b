// dfmpc info: what a model checkpoint holds.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::cli {

void AddInfoCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Print what a model checkpoint holds");
  cmd->add_option("model", *path, "model checkpoint file (state or video model)")->required();
  cmd->callback([path] {
    if (worldmodel::IsVideoModelFile(*path)) {
      std::cout << worldmodel::DescribeVideoModel(worldmodel::LoadVideoModel(*path));
    } else {
      std::cout << worldmodel::DescribeCheckpoint(worldmodel::LoadCheckpoint(*path));
    }
  });
}

}  // namespace dfmpc::cli
