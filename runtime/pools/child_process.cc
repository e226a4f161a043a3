// Child processes for the local worker pool (why: see child_process.h).
#include "runtime/pools/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <string_view>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace lull::pools {

namespace {

// What the forked child does before exec: async-signal-safe calls only (the
// parent has other threads; their locks may be held in this copy).
[[noreturn]] void exec_in_child(pid_t parent, int in_fd, int log_fd, int err_fd, char* const argv[],
                                char* const envp[]) {
  // Die with lull: PR_SET_PDEATHSIG is tied to the thread that forked us,
  // which is the spawner thread below and lives as long as lull. SIGKILL, not
  // SIGTERM: once lull is gone nobody escalates, so a server that ignores or
  // is slow on SIGTERM would stay behind. (What the server itself started
  // gets no such signal; lull's orderly exits kill the whole process group.)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // lull died before prctl took effect
  setpgid(0, 0);                        // its own group: ChildProcess::signal() reaches what it starts
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // fails harmlessly for KILL, STOP, RT internals
  if (dup2(in_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 || dup2(err_fd, 3) < 0) {
    const int e = errno;
    (void)!write(err_fd, &e, sizeof e);
    _exit(127);
  }
  fcntl(3, F_SETFD, FD_CLOEXEC);          // the exec-failure pipe: closed by a successful exec
  syscall(SYS_close_range, 4U, ~0U, 0U);  // none of lull's sockets or files
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(argv[0], argv, envp);
  const int e = errno;
  (void)!write(3, &e, sizeof e);
  _exit(127);
}

// The one thread that forks every child (see exec_in_child for why one
// thread, alive as long as the process). It blocks every signal, so none is
// ever delivered to it. Never destroyed: children must not outlive its end.
class Spawner {
 public:
  static Spawner& instance() {
    static Spawner* s = new Spawner;
    return *s;
  }
  // Runs `job` on the spawner thread and waits for it.
  void run(const std::function<void()>& job) {
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t ticket = ++queued_;
    jobs_.push_back(&job);
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_ >= ticket; });
  }

 private:
  Spawner() {
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return !jobs_.empty(); });
      const std::function<void()>* job = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      (*job)();
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<const std::function<void()>*> jobs_;
  std::uint64_t queued_ = 0, done_ = 0;
};

// An fd closed when it goes, moved to 10 or above (close-on-exec) so that
// the child's dup2s onto 0-3 cannot overwrite one another's source, even when
// lull runs with its standard streams closed.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {
    if (fd >= 0 && fd < 10) {
      const int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
      close(fd);
      fd = high;
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// The line /bin/sh -c runs. One simple command gets "exec ", so the model
// server replaces the shell and is this process's child (signals and the
// parent-death signal reach it: dash does not exec a last command itself). A
// line that already starts with exec, or a compound one (`sleep 1; exec CMD`,
// `a && b`, a pipeline, a subshell), runs as written: prefixing those ran
// only their first command, or failed with "exec: exec: not found". A
// compound line should end in `exec CMD` for the same reason (docs).
std::string shell_line(const std::string& command) {
  const auto first = command.find_first_not_of(" \t\n");
  if (first != std::string::npos && command.compare(first, 4, "exec") == 0 &&
      (first + 4 == command.size() || std::isspace(static_cast<unsigned char>(command[first + 4]))))
    return command;
  // Operators count only outside quotes: `sh -c 'trap "" TERM; exec CMD'`
  // is one simple command, and needs its exec like any other.
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"')
        ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      ++i;
    } else if (std::string_view(";&|\n()`").find(c) != std::string_view::npos) {
      return command;
    }
  }
  return "exec " + command;
}

}  // namespace

ChildProcess::ChildProcess(const std::string& command, const std::string& log_path) : log_path_(log_path) {
  Fd log(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.fd < 0) throw std::runtime_error("cannot open the worker log " + log_path + ": " + std::strerror(errno));
  Fd in(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (in.fd < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  std::string sh = "/bin/sh", dash_c = "-c", line = shell_line(command);
  std::vector<char*> argv = {sh.data(), dash_c.data(), line.data(), nullptr};
  int error = 0;
  Spawner::instance().run([&] {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      error = errno;
      return;
    }
    Fd err_read(pipe_fds[0]), err_write(pipe_fds[1]);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) exec_in_child(parent, in.fd, log.fd, err_write.fd, argv.data(), environ);
    if (pid < 0) {
      error = errno;
      return;
    }
    close(err_write.fd);
    err_write.fd = -1;
    int child_errno = 0;
    ssize_t n;
    while ((n = read(err_read.fd, &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    if (n > 0) {  // exec failed: the child has exited
      waitpid(pid, nullptr, 0);
      error = child_errno;
      return;
    }
    pid_ = pid;
  });
  if (error != 0) throw std::runtime_error("cannot start '" + command + "': " + std::strerror(error));
}

ChildProcess::~ChildProcess() {
  if (exited_ || pid_ <= 0) return;
  signal(SIGKILL);
  waitpid(pid_, &status_, 0);
}

bool ChildProcess::wait_exited(std::int64_t timeout_ms) {
  if (poll_exited()) return true;
  // A pidfd becomes readable when the child exits (Linux 5.3); without one, short polls.
  Fd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid_, 0U)));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return poll_exited();
    if (pidfd.fd >= 0) {
      pollfd p{pidfd.fd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left, 1000)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<std::int64_t>(left, 5)));
    }
    if (poll_exited()) return true;
  }
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

bool ChildProcess::killed_by_signal(int sig) const {
  return exited_ && WIFSIGNALED(status_) && WTERMSIG(status_) == sig;
}

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
  std::string line =
      tail.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
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

}  // namespace lull::pools

namespace lull::pools {

ProcessLauncher& system_process_launcher() {
  struct System final : ProcessLauncher {
    std::unique_ptr<WorkerProcess> launch(const std::string& command, const std::string& log_path) override {
      return std::make_unique<ChildProcess>(command, log_path);
    }
    int pick_port() override { return pick_free_port(); }
  };
  static System launcher;
  return launcher;
}

}  // namespace lull::pools
