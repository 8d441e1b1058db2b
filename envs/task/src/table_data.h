// What a TaskTable reads: one parsed TOML table and where it came from.
#ifndef DFMPC_TASK_SRC_TABLE_DATA_H_
#define DFMPC_TASK_SRC_TABLE_DATA_H_

#include <toml++/toml.h>

#include <string>

namespace dfmpc::task {

class TaskTable;

struct TableData {
  toml::table table;
  std::string file;  // the task file, for messages
  std::string path;  // the table's key path in the file ("" for the root)

  // The node at `key`; owner.Fail(key, "missing") when there is none.
  const toml::node& Get(const TaskTable& owner, const std::string& key) const;
};

}  // namespace dfmpc::task

#endif  // DFMPC_TASK_SRC_TABLE_DATA_H_
