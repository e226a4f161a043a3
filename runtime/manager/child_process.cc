// Child processes for the local worker pool (why: see child_process.h).
#include "runtime/manager/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace lull::manager {

ChildProcess::ChildProcess(const std::string& command, const std::string& log_path) : log_path_(log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: signal() reaches its children too
  std::string sh = "/bin/sh", dash_c = "-c", line = "exec " + command;
  std::vector<char*> argv = {sh.data(), dash_c.data(), line.data(), nullptr};
  const int rc = posix_spawn(&pid_, sh.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start '" + command + "': " + std::strerror(rc));
}

ChildProcess::~ChildProcess() {
  if (exited_ || pid_ <= 0) return;
  signal(SIGKILL);
  waitpid(pid_, &status_, 0);
}

bool ChildProcess::poll_exited() {
  if (exited_) return true;
  const pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) exited_ = true;
  if (exited_) ::kill(-pid_, SIGKILL);  // whatever it left behind in its group
  return exited_;
}

std::string ChildProcess::exit_description() const {
  if (!exited_) return "running";
  if (WIFEXITED(status_)) return "exited with status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "killed by signal " + std::to_string(WTERMSIG(status_));
  return "ended";
}

bool ChildProcess::killed_by_signal(int sig) const { return exited_ && WIFSIGNALED(status_) && WTERMSIG(status_) == sig; }

void ChildProcess::signal(int sig) {
  if (!exited_ && pid_ > 0) ::kill(-pid_, sig);
}

std::string ChildProcess::last_log_line() const {
  std::ifstream in(log_path_, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > 4096 ? size - 4096 : 0;
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  auto end = tail.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  auto begin = tail.rfind('\n', end);
  std::string line = tail.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

int pick_free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("no socket for a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(errno));
  return ntohs(addr.sin_port);
}

}  // namespace lull::manager
