#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace dfmpc::envs {
namespace {

std::string UniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  return ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

}  // namespace

AtomicFile::AtomicFile(std::string destination)
    : destination_(std::move(destination)), temporary_(destination_ + UniqueSuffix()) {
  if (destination_.empty()) throw std::invalid_argument("output path is empty");
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temporary_.c_str());
}

void AtomicFile::Commit() {
  const int fd = open(temporary_.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot flush '" + temporary_ + "': " + reason);
  }
  close(fd);
  if (std::rename(temporary_.c_str(), destination_.c_str()) != 0) {
    throw std::runtime_error("cannot rename '" + temporary_ + "' to '" + destination_ +
                             "': " + std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace dfmpc::envs
