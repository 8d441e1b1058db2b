// Atomic file replacement, shared by every library and tool of the project
// (internal, not installed): readers of the destination see the old file or
// the complete new one, never a partial write, even after a crash.
#ifndef DFMPC_WORLDMODEL_INTERNAL_ATOMIC_FILE_H_
#define DFMPC_WORLDMODEL_INTERNAL_ATOMIC_FILE_H_

#include <string>
#include <string_view>

namespace dfmpc::internal {

// A new, empty file with a unique name in the destination's directory
// (mode 0666 & ~umask), for a writer to fill through temporary_path().
// Commit() flushes it to disk, renames it over the destination and flushes
// the directory. Destroyed uncommitted, it is removed and the destination is
// untouched.
class AtomicFile {
 public:
  // Throws std::runtime_error naming `destination` when the file cannot be
  // created, std::invalid_argument when `destination` is empty.
  explicit AtomicFile(std::string destination);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& temporary_path() const { return temporary_; }

  // Throws std::runtime_error naming the destination on failure; the
  // temporary file is removed then.
  void Commit();

 private:
  std::string destination_;
  std::string temporary_;
  bool committed_ = false;
};

// Replaces `destination` by `contents` through an AtomicFile.
void WriteFileAtomically(const std::string& destination, std::string_view contents);

}  // namespace dfmpc::internal

#endif  // DFMPC_WORLDMODEL_INTERNAL_ATOMIC_FILE_H_
