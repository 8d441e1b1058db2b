#include "plot/temp_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace dfmpc::plot {

TempFile::TempFile(const std::string& beside, const std::string& tag) {
  const std::string pattern = beside + "." + tag + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    throw std::runtime_error("cannot create a file beside " + beside + ": " +
                             std::strerror(errno));
  }
  path_ = name.data();
  const bool readable = fchmod(fd, 0644) == 0;  // mkstemp makes it private (0600)
  const int chmod_error = errno;
  close(fd);
  if (!readable) {
    std::remove(path_.c_str());
    throw std::runtime_error("cannot set permissions of " + path_ + ": " +
                             std::strerror(chmod_error));
  }
}

TempFile::~TempFile() {
  if (!renamed_) std::remove(path_.c_str());
}

void TempFile::Write(const std::string& content) const {
  std::ofstream file(path_, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) throw std::runtime_error("cannot write " + path_);
}

void TempFile::RenameTo(const std::string& destination) {
  if (std::rename(path_.c_str(), destination.c_str()) != 0) {
    throw std::runtime_error("cannot move " + path_ + " to " + destination + ": " +
                             std::strerror(errno));
  }
  renamed_ = true;
}

}  // namespace dfmpc::plot
