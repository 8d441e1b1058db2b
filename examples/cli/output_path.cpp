#include "output_path.h"

#include <unistd.h>

#include <filesystem>
#include <string>

namespace dfmpc::cli {

const CLI::Validator& OutputFileInExistingDirectory() {
  static const CLI::Validator validator(
      [](std::string& path) -> std::string {
        const std::filesystem::path parent = std::filesystem::path(path).parent_path();
        const std::string directory = parent.empty() ? "." : parent.string();
        std::error_code error;
        if (!std::filesystem::is_directory(directory, error)) {
          return "directory " + directory + " does not exist";
        }
        if (access(directory.c_str(), W_OK) != 0) {
          return "directory " + directory + " is not writable";
        }
        return std::string();
      },
      "FILE");
  return validator;
}

}  // namespace dfmpc::cli
