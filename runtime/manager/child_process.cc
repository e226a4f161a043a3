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
#include <cstdint>
#include <random>
#include <utility>
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

namespace {

// The kernel's ephemeral range (where every outgoing connection's local port
// comes from); 32768-60999 when it cannot be read.
std::pair<int, int> ephemeral_port_range() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int lo = 32768, hi = 60999;
  if (!(in >> lo >> hi) || lo <= 0 || hi < lo) return {32768, 60999};
  return {lo, hi};
}

bool bindable(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("no socket for a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as the servers bind
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

int pick_free_port() {
  // Not the kernel's "bind to port 0": that hands out a port from the
  // ephemeral range, which every outgoing connection on the machine draws
  // from too, so a busy machine (a test suite full of HTTP clients) often
  // reuses it before the child binds. Below that range only listeners that
  // chose their port compete. Random start, then a linear probe.
  const auto [eph_lo, eph_hi] = ephemeral_port_range();
  int lo = 10000, hi = eph_lo - 1;
  if (hi - lo < 1000) lo = eph_hi + 1, hi = 65535;  // an unusual range: use what lies above it
  thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pick(lo, hi);
  const int start = pick(rng);
  for (int i = 0; i <= hi - lo; ++i) {
    const int port = lo + (start - lo + i) % (hi - lo + 1);
    if (bindable(port)) return port;
  }
  throw std::runtime_error("cannot find a free port in " + std::to_string(lo) + "-" + std::to_string(hi));
}

}  // namespace lull::manager
