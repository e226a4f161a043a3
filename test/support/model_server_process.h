#pragma once
// Test helper: runs test/modelserver/lull_modelserver.py as a child
// process on 127.0.0.1, on a free port the server picks itself, and stops it
// when the object goes away. Every wait is bounded.
#include <sys/types.h>

#include <string>
#include <vector>

namespace lull::serve::testing {

class ModelServerProcess {
 public:
  // `args` are passed to the server (e.g. {"--fake", "fast:1:0.5"}); `port` 0
  // lets it pick one. Throws std::runtime_error if it is not up in time.
  // `script` (in the source tree) may be another server taking the same
  // --host/--port/--port-file flags (the fake Kubernetes API server).
  explicit ModelServerProcess(std::vector<std::string> args, int port = 0, double start_timeout_s = 60,
                              std::string script = "test/modelserver/lull_modelserver.py");
  ~ModelServerProcess();
  ModelServerProcess(const ModelServerProcess&) = delete;
  ModelServerProcess& operator=(const ModelServerProcess&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool running() const { return pid_ > 0; }
  void kill_now();  // SIGKILL, as a crash would
  // Same arguments, same port; `extra_args` added for this start only
  // (e.g. {"--models-ready-after-ms", "2000"}: back with its models still loading).
  void restart(const std::vector<std::string>& extra_args = {});

 private:
  void launch(double start_timeout_s, const std::vector<std::string>& extra_args = {});
  std::vector<std::string> args_;
  std::string script_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string port_file_;
};

// The path of a file in the source tree.
std::string source_path(const std::string& relative);
// The Debian interpreter that has python3-torch (not a pyenv shim).
std::string python3();
// A free loopback port (bound then released; fine for tests).
int free_port();

}  // namespace lull::serve::testing
