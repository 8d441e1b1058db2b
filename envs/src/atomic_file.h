// Atomic file creation: write to a temporary file in the destination's
// directory, then rename it over the destination. Readers see either no file
// (or the old one) or the complete new one, never a partial write.
#ifndef DFMPC_ENVS_SRC_ATOMIC_FILE_H_
#define DFMPC_ENVS_SRC_ATOMIC_FILE_H_

#include <string>

namespace dfmpc::envs {

class AtomicFile {
 public:
  explicit AtomicFile(std::string destination);
  // Removes the temporary file unless Commit succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where to write (a name no other writer uses).
  const std::string& temporary_path() const { return temporary_; }
  // Flushes the closed temporary file to disk and renames it into place.
  // Throws std::runtime_error on failure.
  void Commit();

 private:
  std::string destination_;
  std::string temporary_;
  bool committed_ = false;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_ATOMIC_FILE_H_
