// Atomic file replacement for the world model's outputs (internal).
#ifndef DFMPC_WORLDMODEL_SRC_ATOMIC_PATH_H_
#define DFMPC_WORLDMODEL_SRC_ATOMIC_PATH_H_

#include <functional>
#include <string>

namespace dfmpc::worldmodel {

// Calls write(temporary) with a temporary path in the directory of `path`,
// then renames it over `path`. If write throws or the rename fails, the
// temporary file is removed, `path` is untouched and the error propagates
// (std::runtime_error naming `path` for a failed rename).
void WriteAtomically(const std::string& path,
                     const std::function<void(const std::string&)>& write);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_ATOMIC_PATH_H_
