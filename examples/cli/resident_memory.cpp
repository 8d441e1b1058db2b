#include "resident_memory.h"

#include <fstream>
#include <string>

namespace dfmpc::cli {

long ResidentKib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = -1;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
    status.ignore(1 << 12, '\n');
  }
  return -1;
}

}  // namespace dfmpc::cli
