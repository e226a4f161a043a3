#pragma once
// Test helper: `lull serve` as a child process (the built binary), its
// stderr in a log file, listening on a port it picks and writes to a port
// file; stopped with SIGTERM when the object goes. What the CLI tests that
// talk to a running `lull serve` share. Every wait is bounded.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/net/http_client.h"

extern char** environ;

namespace lull::serve::testing {

class LullServeProcess {
 public:
  // `args`: what follows `lull serve` (--listen and --port-file are added).
  LullServeProcess(std::vector<std::string> args, const std::string& log, const std::string& port_file) {
    args.insert(args.begin(), {LULL_BINARY, "serve", "--listen", "127.0.0.1:0", "--port-file", port_file});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, LULL_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start lull serve");
    std::string port;
    for (int i = 0; i < 300 && port.empty(); ++i) {
      std::ifstream(port_file) >> port;
      if (port.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (port.empty()) {
      stop();
      throw std::runtime_error("lull serve wrote no port within 30 s (see " + log + ")");
    }
    base_ = "http://127.0.0.1:" + port;
  }
  ~LullServeProcess() { stop(); }
  LullServeProcess(const LullServeProcess&) = delete;
  LullServeProcess& operator=(const LullServeProcess&) = delete;

  const std::string& base() const { return base_; }
  // POSTs `body` to the task and waits for the answer.
  net::HttpResponse post(const std::string& task, const std::string& body) {
    net::HttpRequest r;
    r.method = "POST";
    r.url = base_ + "/predictions/" + task;
    r.body = body;
    r.timeout_ms = 10000;
    return client_.fetch(r);
  }
  // The body of GET /metrics.
  std::string metrics() {
    net::HttpRequest r;
    r.url = base_ + "/metrics";
    return client_.fetch(r).body;
  }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  pid_t pid_ = -1;
  std::string base_;
  net::HttpClient client_;
};

}  // namespace lull::serve::testing
