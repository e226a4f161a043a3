#include "test/support/model_server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace lull::serve::testing {

std::string source_path(const std::string& relative) { return std::string(LULL_SOURCE_DIR) + "/" + relative; }
std::string python3() { return LULL_PYTHON3; }

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

ModelServerProcess::ModelServerProcess(std::vector<std::string> args, int port, double start_timeout_s,
                                       std::string script)
    : args_(std::move(args)), script_(std::move(script)), port_(port) {
  char tmpl[] = "/tmp/lull-test-port-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  port_file_ = tmpl;
  launch(start_timeout_s);
}

ModelServerProcess::~ModelServerProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 40; ++i) {  // up to 2 s, then SIGKILL
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::remove(port_file_.c_str());
}

void ModelServerProcess::kill_now() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void ModelServerProcess::restart(const std::vector<std::string>& extra_args) {
  kill_now();
  launch(60, extra_args);
}

void ModelServerProcess::launch(double start_timeout_s, const std::vector<std::string>& extra_args) {
  std::remove(port_file_.c_str());
  std::vector<std::string> argv = {python3(), source_path(script_),  "--host",      "127.0.0.1",
                                   "--port",  std::to_string(port_), "--port-file", port_file_};
  argv.insert(argv.end(), args_.begin(), args_.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  if (posix_spawn(&pid_, cargv[0], nullptr, nullptr, cargv.data(), environ) != 0)
    throw std::runtime_error("cannot start " + argv[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(start_timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(port_file_);
    int p = 0;
    if (in >> p && p > 0) {
      port_ = p;
      return;
    }
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("model server exited during start-up");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("model server did not start within the time limit");
}

}  // namespace lull::serve::testing
