#pragma once
// How the local-process pool starts its workers, as an interface (after
// ninja's CommandRunner and its FakeCommandRunner): the system launcher runs
// real processes (ChildProcess) on free ports; tests hand in a fake
// (test/support/fake_process_launcher.h) whose processes exit, crash or
// ignore SIGTERM when the test says, so the pool's rules run in process.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace lull::pools {

// One running worker, as the pool sees it (ChildProcess's contract).
class WorkerProcess {
 public:
  virtual ~WorkerProcess() = default;  // SIGKILLs and reaps one still running
  virtual pid_t pid() const = 0;
  // Reaps the process if it has exited (never blocks); true once it has.
  virtual bool poll_exited() = 0;
  virtual bool exited() const = 0;
  // Waits up to `timeout_ms` for it to exit; true once it has.
  virtual bool wait_exited(std::int64_t timeout_ms) = 0;
  // "exited with status 2", "killed by signal 9".
  virtual std::string exit_description() const = 0;
  virtual void signal(int sig) = 0;
  // The last non-empty line of its output, "" if none.
  virtual std::string last_log_line() const = 0;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Runs the command line, its output appended to `log_path`; throws
  // std::runtime_error when it cannot.
  virtual std::unique_ptr<WorkerProcess> launch(const std::string& command, const std::string& log_path) = 0;
  // A TCP port on 127.0.0.1 for a worker to listen on.
  virtual int pick_port() = 0;
};

// Real processes (ChildProcess) on ports that were free a moment ago (pick_free_port).
ProcessLauncher& system_process_launcher();

}  // namespace lull::pools
