#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

namespace dfmpc::internal {
namespace {

std::runtime_error Failure(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

std::string Directory(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Creates "<destination>.tmp.XXXXXXXX" with O_EXCL, like mkstemp, but with
// mode 0666 so that the kernel applies the umask (mkstemp makes it 0600).
std::string CreateUniqueFile(const std::string& destination) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::uniform_int_distribution<int> pick(0, sizeof(kAlphabet) - 2);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = destination + ".tmp.";
    for (int i = 0; i < 8; ++i) name += kAlphabet[pick(random)];
    const int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      close(fd);
      return name;
    }
    if (errno != EEXIST) break;
  }
  throw Failure("cannot create a temporary file for", destination);
}

void Fsync(const std::string& path, int flags, const std::string& destination) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  // EINVAL: a file system that cannot sync directories; nothing more to do.
  const bool synced = fd >= 0 && (fsync(fd) == 0 || errno == EINVAL);
  const int error = errno;
  if (fd >= 0) close(fd);
  errno = error;
  if (!synced) throw Failure("cannot flush " + path + " to disk for", destination);
}

}  // namespace

AtomicFile::AtomicFile(std::string destination) : destination_(std::move(destination)) {
  if (destination_.empty()) throw std::invalid_argument("output path is empty");
  temporary_ = CreateUniqueFile(destination_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temporary_.c_str());
}

void AtomicFile::Commit() {
  Fsync(temporary_, O_RDONLY, destination_);
  if (std::rename(temporary_.c_str(), destination_.c_str()) != 0) {
    throw Failure("cannot move the new file into place at", destination_);
  }
  committed_ = true;
  Fsync(Directory(destination_), O_RDONLY | O_DIRECTORY, destination_);
}

void WriteFileAtomically(const std::string& destination, std::string_view contents) {
  AtomicFile file(destination);
  const int fd = open(file.temporary_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw Failure("cannot open the temporary file for", destination);
  while (!contents.empty()) {
    const ssize_t written = write(fd, contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int error = errno;
      close(fd);
      errno = error;
      throw Failure("cannot write", destination);
    }
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  if (close(fd) != 0) throw Failure("cannot write", destination);
  file.Commit();
}

}  // namespace dfmpc::internal
