#pragma once
// What the pool tests share: the stand-in model server's command for a
// pool, a bounded wait, and one worker's entry in a pool's list.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "test/support/model_server_process.h"
#include "runtime/manager/worker_pool.h"

namespace lull::manager::testing {

// The stand-in model server on the port the pool picks, with `args`.
inline std::string server_command(const std::string& args) {
  return serve::testing::python3() + " " + serve::testing::source_path("test/modelserver/lull_modelserver.py") +
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

// The pool's entry for worker `id` (fails the test when there is none).
inline manager::WorkerInfo find_worker(manager::WorkerPool& pool, const std::string& id) {
  for (const auto& w : pool.list_workers())
    if (w.id == id) return w;
  FAIL("no worker " << id);
  return {};
}

}  // namespace lull::manager::testing
