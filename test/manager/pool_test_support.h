#pragma once
// What the tests over real worker processes share: the stand-in model
// server's command for a pool, and a bounded wait.
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "model_server_process.h"

namespace lull::manager::testing {

// The stand-in model server on the port the pool picks, with `args`.
inline std::string server_command(const std::string& args) {
  return serve::testing::python3() + " " + serve::testing::source_path("runtime/modelserver/lull_modelserver.py") +
         " --port {port} " + args;
}

// Polls until `done` holds (at most 60 s: start-up of a Python process on a busy machine).
inline bool wait_until(const std::function<bool()>& done, int timeout_ms = 60000) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace lull::manager::testing
