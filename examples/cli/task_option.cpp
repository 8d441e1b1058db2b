#include "task_option.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::cli {

CLI::Validator TaskNameOrFolder() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::vector<std::string> names = envs::TaskNames();
        if (std::find(names.begin(), names.end(), value) != names.end()) return "";
        if (std::filesystem::is_regular_file(std::filesystem::path(value) / task::kTaskFileName)) {
          return "";
        }
        std::string known;
        for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
        return "unknown task '" + value + "' (built in: " + known + "; or a folder holding " +
               task::kTaskFileName + ")";
      },
      "NAME|DIR");
}

}  // namespace dfmpc::cli
