#include "atomic_path.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace dfmpc::worldmodel {

void WriteAtomically(const std::string& path,
                     const std::function<void(const std::string&)>& write) {
  // The process id keeps concurrent writers of the same path apart.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  try {
    write(temporary);
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot move the new file into place at " + path);
  }
}

}  // namespace dfmpc::worldmodel
