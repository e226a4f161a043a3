#pragma once
// One child process of lull's: started from a shell command line in its own
// process group (so a signal reaches whatever the command starts), its
// stdout and stderr appended to a log file, stopped with SIGTERM and then
// SIGKILL, reaped without blocking. The local-process worker pool runs each
// model server as one; only this file calls fork/exec, kill and waitpid.
//
// The child starts clean whatever the calling thread's state: no signal
// blocked (lull serve blocks SIGINT/SIGTERM in every thread for its signal
// watcher, and a blocked mask survives exec), every disposition default, no
// descriptor of lull's but its stdin/stdout/stderr. It dies with lull on any
// exit, SIGKILL included (why and how: child_process.cc).
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "runtime/pools/process_launcher.h"

namespace lull::pools {

class ChildProcess final : public WorkerProcess {
 public:
  // Runs `/bin/sh -c "exec COMMAND"` with stdin from /dev/null and output
  // appended to `log_path`. Throws std::runtime_error naming the log file
  // when it cannot be opened, else naming the command.
  ChildProcess(const std::string& command, const std::string& log_path);
  ~ChildProcess() override;  // SIGKILLs and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const override { return pid_; }
  // Reaps the child if it has exited (never blocks); true once it has.
  bool poll_exited() override;
  bool exited() const override { return exited_; }
  // Waits up to `timeout_ms` for the child to exit, reaping it; true once it has.
  bool wait_exited(std::int64_t timeout_ms) override;
  // "exited with status 2", "killed by signal 9" (after poll_exited() said true).
  std::string exit_description() const override;
  bool killed_by_signal(int sig) const;
  // Sends `sig` to the child's process group (nothing once it has exited).
  void signal(int sig) override;
  const std::string& log_path() const { return log_path_; }
  // The last non-empty line of the log (at most 300 characters), "" if none.
  std::string last_log_line() const override;

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string log_path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago, chosen below the
// kernel's ephemeral range so that outgoing connections cannot take it before
// the model server binds it. Another listener may still take it in between;
// the worker then fails its start-up and says so.
int pick_free_port();

}  // namespace lull::pools
