// A uniquely named file beside a destination, removed again unless renamed
// into place: the building block for atomic writes.
#ifndef DFMPC_EXAMPLES_PLOT_TEMP_FILE_H_
#define DFMPC_EXAMPLES_PLOT_TEMP_FILE_H_

#include <string>

namespace dfmpc::plot {

class TempFile {
 public:
  // Creates an empty file named "<beside>.<tag>.XXXXXX" (mode 0644). Throws
  // std::runtime_error when the directory cannot hold it.
  TempFile(const std::string& beside, const std::string& tag);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

  // Writes `content` into the file. Throws std::runtime_error on failure.
  void Write(const std::string& content) const;

  // Renames the file to `destination`, after which it is no longer removed.
  // Throws std::runtime_error on failure.
  void RenameTo(const std::string& destination);

 private:
  std::string path_;
  bool renamed_ = false;
};

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_TEMP_FILE_H_
