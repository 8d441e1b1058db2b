#include "plot/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace dfmpc::plot {
namespace {

std::runtime_error SystemError(const std::string& what, int error) {
  return std::runtime_error(what + ": " + std::strerror(error));
}

// Owns the posix_spawn file actions for: stdin from /dev/null, stdout and
// stderr into `pipe_write`.
class FileActions {
 public:
  explicit FileActions(int pipe_write) {
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, pipe_write, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, pipe_write, STDERR_FILENO);
  }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      return text;
    }
  }
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw SystemError("waitpid", errno);
  }
  return status;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  // Close-on-exec, so children spawned concurrently by other threads do not
  // inherit the write end and keep the pipe open.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw SystemError("pipe", errno);
  pid_t pid = 0;
  int spawn_error = 0;
  {
    const FileActions actions(fds[1]);
    spawn_error = posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ);
  }
  close(fds[1]);
  if (spawn_error != 0) {
    close(fds[0]);
    throw SystemError("cannot run " + argv[0], spawn_error);
  }
  ProcessResult result;
  result.output = ReadAll(fds[0]);
  close(fds[0]);
  const int status = WaitFor(pid);
  result.exited_normally = WIFEXITED(status);
  result.exit_code = result.exited_normally ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace dfmpc::plot
