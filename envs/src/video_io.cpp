#include "dfmpc/envs/video_io.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "atomic_file.h"

namespace dfmpc::envs {
namespace {

constexpr int kMessageLines = 10;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { Close(); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::runtime_error SystemError(const std::string& what, int error) {
  return std::runtime_error(what + ": " + std::strerror(error));
}

void CheckArguments(const std::vector<std::vector<std::uint8_t>>& frames, int width, int height,
                    int frames_per_second) {
  if (frames.empty()) throw std::invalid_argument("MP4 needs at least one frame");
  if (width < 1 || height < 1) {
    throw std::invalid_argument("MP4 frame size " + std::to_string(width) + "x" +
                                std::to_string(height) + " must be positive");
  }
  if (frames_per_second < 1) {
    throw std::invalid_argument("MP4 frame rate must be >= 1, got " +
                                std::to_string(frames_per_second));
  }
  const std::size_t expected = static_cast<std::size_t>(width) * height * 3;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].size() != expected) {
      throw std::invalid_argument("MP4 frame " + std::to_string(i) + " has " +
                                  std::to_string(frames[i].size()) + " bytes, expected " +
                                  std::to_string(width) + "x" + std::to_string(height) + "x3");
    }
  }
}

// The `ffmpeg` that execvp would run.
std::string FindFfmpeg() {
  const char* variable = std::getenv("PATH");
  const std::string path = variable != nullptr ? variable : "/usr/bin:/bin";
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = path.find(':', begin);
    std::string directory = path.substr(begin, end == std::string::npos ? end : end - begin);
    if (directory.empty()) directory = ".";
    const std::string candidate = directory + "/ffmpeg";
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  throw std::runtime_error("ffmpeg not found in PATH: install Debian's ffmpeg (scripts/setup.sh)");
}

// An unnamed file for ffmpeg's messages; a pipe could fill up and stall
// ffmpeg while this process is still sending frames.
FileDescriptor MessageFile() {
  std::string name = (std::filesystem::temp_directory_path() / "dfmpc_ffmpeg_XXXXXX").string();
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw SystemError("cannot create a file for ffmpeg's messages", errno);
  unlink(name.c_str());
  return FileDescriptor(fd);
}

// The last lines of `fd`'s contents, trailing blank space removed.
std::string LastLines(int fd, int count) {
  std::string text;
  char buffer[4096];
  for (off_t offset = 0;;) {
    const ssize_t got = pread(fd, buffer, sizeof buffer, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    offset += got;
  }
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  std::size_t start = text.size();
  for (int line = 0; line < count; ++line) {
    if (start == 0 || (start = text.rfind('\n', start - 1)) == std::string::npos) return text;
  }
  return text.substr(start + 1);
}

std::vector<std::string> FfmpegArguments(const std::string& output, int width, int height,
                                         int frames_per_second) {
  return {"ffmpeg", "-hide_banner", "-loglevel", "error",
          // Raw frames on stdin.
          "-f", "rawvideo", "-pixel_format", "rgb24", "-video_size",
          std::to_string(width) + "x" + std::to_string(height), "-framerate",
          std::to_string(frames_per_second), "-i", "pipe:0",
          // yuv420p halves the chroma resolution, so the size must be even.
          "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
          "-movflags", "+faststart",
          // The temporary name has no .mp4 to go by; "file:" keeps a name with
          // ':' or a leading '-' from being read as a protocol or an option.
          "-f", "mp4", "-y", "file:" + output};
}

pid_t Spawn(const std::string& program, std::vector<std::string> arguments, int input,
            int messages) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, messages, STDERR_FILENO);
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw SystemError("cannot start " + program, error);
  return pid;
}

// Sends all of `size` bytes; false when the reader is gone. MSG_NOSIGNAL
// turns the SIGPIPE that would kill this process into EPIPE.
bool SendAll(int socket, const std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t sent = send(socket, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return false;
    data += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return true;
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw SystemError("cannot wait for ffmpeg", errno);
  }
  return status;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

void WriteMp4(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames,
              int width, int height, int frames_per_second) {
  CheckArguments(frames, width, height, frames_per_second);
  const std::string ffmpeg = FindFfmpeg();
  internal::AtomicFile file(path);
  const FileDescriptor messages = MessageFile();
  // A socket rather than a pipe for ffmpeg's stdin, for MSG_NOSIGNAL: the
  // alternative, ignoring SIGPIPE, would change it for every thread.
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    throw SystemError("cannot connect to ffmpeg", errno);
  }
  FileDescriptor ours(ends[0]);
  FileDescriptor theirs(ends[1]);
  const pid_t pid =
      Spawn(ffmpeg, FfmpegArguments(file.temporary_path(), width, height, frames_per_second),
            theirs.get(), messages.get());
  theirs.Close();
  std::size_t sent = 0;
  while (sent < frames.size() && SendAll(ours.get(), frames[sent].data(), frames[sent].size())) {
    ++sent;
  }
  ours.Close();  // end of input: ffmpeg finishes the file
  const int status = WaitFor(pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sent < frames.size()) {
    const std::string output = LastLines(messages.get(), kMessageLines);
    throw std::runtime_error("ffmpeg failed to write '" + path + "' (" + DescribeStatus(status) +
                             ", " + std::to_string(sent) + " of " + std::to_string(frames.size()) +
                             " frames sent)" + (output.empty() ? "" : ":\n" + output));
  }
  file.Commit();
}

}  // namespace dfmpc::envs
