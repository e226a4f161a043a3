#pragma once
// An in-memory ProcessLauncher (runtime/pools/process_launcher.h) for the
// local-process pool's logic tests, after ninja's FakeCommandRunner: no fork,
// no port. Ports are handed out in order from 20000; each launched process
// is recorded with its command, runs until the test ends it (exit(),
// crash()) or a signal does (SIGTERM ends it with status 0 unless it ignores
// SIGTERM; SIGKILL always, as signal 9), and remembers the signals it got.
// What it answers over HTTP is the fake transport's business
// (fake_http_transport.h): a test routes http://127.0.0.1:PORT/ping there.
#include <signal.h>

#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/pools/process_launcher.h"

namespace lull::test {

class FakeProcessLauncher final : public pools::ProcessLauncher {
 public:
  // One launched process's state, shared by the pool's handle and the test.
  struct Process {
    std::string command, log_path;
    int pid = 0;
    bool ignores_term = false;  // set before the signal comes: only SIGKILL ends it
    std::vector<int> signals;   // every signal sent, in order
    bool exited = false;
    std::string how;  // exit_description()
    std::string last_line;
  };

  // Set before the launch: how each new process starts (e.g. exits at once, ignores SIGTERM).
  std::function<void(Process&)> on_launch;

  std::unique_ptr<pools::WorkerProcess> launch(const std::string& command, const std::string& log_path) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto p = std::make_shared<Process>();
    p->command = command;
    p->log_path = log_path;
    p->pid = 1000 + static_cast<int>(processes_.size());
    if (on_launch) on_launch(*p);
    processes_.push_back(p);
    return std::make_unique<Handle>(this, p);
  }
  int pick_port() override {
    std::lock_guard<std::mutex> lock(mu_);
    return next_port_++;
  }

  // The i-th process launched (0-based).
  std::shared_ptr<Process> process(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    if (i >= processes_.size()) throw std::out_of_range("no fake process " + std::to_string(i));
    return processes_[i];
  }
  std::size_t launched() {
    std::lock_guard<std::mutex> lock(mu_);
    return processes_.size();
  }
  // The process exits with `status`, having printed `last_line`.
  void exit(std::size_t i, int status, const std::string& last_line = "") {
    std::lock_guard<std::mutex> lock(mu_);
    end(*processes_.at(i), "exited with status " + std::to_string(status), last_line);
  }
  // The process dies of signal `sig` (an OOM kill: 9).
  void crash(std::size_t i, int sig) {
    std::lock_guard<std::mutex> lock(mu_);
    end(*processes_.at(i), "killed by signal " + std::to_string(sig), "");
  }
  std::vector<int> signals(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return processes_.at(i)->signals;
  }
  bool exited(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return processes_.at(i)->exited;
  }

 private:
  static void end(Process& p, const std::string& how, const std::string& last_line) {
    if (p.exited) return;
    p.exited = true;
    p.how = how;
    if (!last_line.empty()) p.last_line = last_line;
  }

  class Handle final : public pools::WorkerProcess {
   public:
    Handle(FakeProcessLauncher* owner, std::shared_ptr<Process> p) : owner_(owner), p_(std::move(p)) {}
    ~Handle() override { signal(SIGKILL); }
    pid_t pid() const override { return p_->pid; }
    bool poll_exited() override { return exited(); }
    bool exited() const override {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      return p_->exited;
    }
    bool wait_exited(std::int64_t) override { return exited(); }  // fake time: nothing happens while waiting
    std::string exit_description() const override {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      return p_->exited ? p_->how : "running";
    }
    void signal(int sig) override {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      if (p_->exited) return;
      p_->signals.push_back(sig);
      if (sig == SIGKILL) end(*p_, "killed by signal 9", "");
      if (sig == SIGTERM && !p_->ignores_term) end(*p_, "exited with status 0", "");
    }
    std::string last_log_line() const override {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      return p_->last_line;
    }

   private:
    FakeProcessLauncher* owner_;
    std::shared_ptr<Process> p_;
  };

  std::mutex mu_;
  std::vector<std::shared_ptr<Process>> processes_;
  int next_port_ = 20000;
};

}  // namespace lull::test
