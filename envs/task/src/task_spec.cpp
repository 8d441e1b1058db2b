#include "dfmpc/task/task_spec.h"

#include <dlfcn.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "table_data.h"

namespace dfmpc::task {
namespace {

namespace fs = std::filesystem;

// The top-level keys a task file may hold; docs/your_robot.md explains each.
const std::set<std::string>& KnownSections() {
  static const std::set<std::string> known = {
      "name",        "description", "mjcf",    "action_repeat", "episode_physics_steps", "camera",
      "observation", "actions",     "initial", "reward",        "shaped_reward",         "success",
      "cost",        "planner",     "oracle",  "quantity",      "settle_physics_steps"};
  return known;
}

std::string ReadText(const fs::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read " + what + " '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::invalid_argument("cannot read " + what + " '" + path.string() + "'");
  return text.str();
}

TaskTable ParseRoot(const std::string& toml_text, const std::string& file) {
  toml::table table;
  try {
    table = toml::parse(toml_text, file);
  } catch (const toml::parse_error& error) {
    const toml::source_position where = error.source().begin;
    throw std::invalid_argument(file + ":" + std::to_string(where.line) + ":" +
                                std::to_string(where.column) + ": " +
                                std::string(error.description()));
  }
  TaskTable root(std::make_shared<const TableData>(TableData{std::move(table), file, ""}));
  return root;
}

void CheckSections(const TaskTable& root) {
  for (const std::string& name : root.Keys()) {
    if (KnownSections().count(name) == 0) {
      std::string known;
      for (const std::string& section : KnownSections())
        known += (known.empty() ? "" : ", ") + section;
      root.Fail(name, "unknown key (a task file holds: " + known + ")");
    }
  }
}

std::string CheckedName(const TaskTable& root) {
  const std::string name = root.Text("name");
  if (!IsTaskName(name))
    root.Fail("name", "'" + name + "' must be 1-64 letters, digits, '_' or '-'");
  return name;
}

TaskSpec Build(const std::string& toml_text, const std::string& file) {
  TaskTable root = ParseRoot(toml_text, file);
  CheckSections(root);
  TaskSpec spec{CheckedName(root), "", file, toml_text, "", "", root};
  return spec;
}

bool IsPathLike(const std::string& name_or_directory) {
  return name_or_directory.find('/') != std::string::npos || name_or_directory == "." ||
         name_or_directory == "..";
}

std::string KnownNames() {
  std::string known;
  for (const std::string& name : BuiltinTaskNames()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

}  // namespace

bool IsTaskName(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

TaskSpec ParseTaskSpec(const std::string& toml_text, const std::string& mjcf_text,
                       const std::string& origin) {
  TaskSpec spec = Build(toml_text, origin);
  spec.root.Text("mjcf");  // required even here: the folder it came from had one
  spec.mjcf_text = mjcf_text;
  return spec;
}

TaskSpec LoadTaskSpec(const std::string& name_or_directory) {
  fs::path directory;
  if (IsPathLike(name_or_directory)) {
    directory = name_or_directory;
    if (!fs::is_directory(directory)) {
      throw std::invalid_argument("task folder '" + name_or_directory + "' does not exist");
    }
  } else {
    const std::vector<std::string> names = BuiltinTaskNames();
    if (std::find(names.begin(), names.end(), name_or_directory) == names.end()) {
      throw std::invalid_argument("unknown task '" + name_or_directory + "' (built in: " +
                                  KnownNames() + "; or give a task folder's path)");
    }
    directory = fs::path(BuiltinTaskDirectory()) / name_or_directory;
  }
  const fs::path file = directory / kTaskFileName;
  if (!fs::is_regular_file(file)) {
    throw std::invalid_argument("task folder '" + directory.string() + "' has no " + kTaskFileName);
  }
  TaskSpec spec = Build(ReadText(file, "task file"), file.string());
  const fs::path mjcf = directory / spec.root.Text("mjcf");
  if (!fs::is_regular_file(mjcf)) spec.root.Fail("mjcf", "no file '" + mjcf.string() + "'");
  spec.directory = directory.string();
  spec.mjcf_file = mjcf.string();
  spec.mjcf_text = ReadText(mjcf, "MJCF");
  return spec;
}

std::string BuiltinTaskDirectory() {
  if (const char* override_dir = std::getenv("DFMPC_TASKS_DIR")) return override_dir;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&BuiltinTaskDirectory), &info) != 0 &&
      info.dli_fname != nullptr) {
    const fs::path installed =
        fs::path(info.dli_fname).parent_path() / ".." / "share" / "dfmpc" / "tasks";
    if (fs::is_directory(installed)) return fs::canonical(installed).string();
  }
  return DFMPC_SOURCE_TASKS_DIR;
}

std::vector<std::string> BuiltinTaskNames() {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(BuiltinTaskDirectory(), error)) {
    if (fs::is_regular_file(entry.path() / kTaskFileName)) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace dfmpc::task
