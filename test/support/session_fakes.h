#pragma once
// The serve session's test doubles: a backend that records each batch and
// finishes it when the test says so, a health source the test flips, and a
// rig that wires them to a session on a virtual clock (no sockets, no Python).
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/clock.h"
#include "runtime/core/policy_table.h"
#include "runtime/session/serve_session.h"
#include "runtime/core/worker_health.h"
#include "test/support/session_test_support.h"

namespace lull::serve::testing {

using lull::core::BatchRequest;
using lull::core::BatchResult;

// Records batches (with the inputs it would send); finishes them on request.
class FakeBackend final : public lull::core::Backend {
 public:
  void start_batch(const BatchRequest& b) override {
    started.push_back(b);
    std::vector<std::string> in;
    for (std::size_t i = 0; i < b.queries.size(); ++i)
      in.push_back(i < b.inputs.size() && b.inputs[i] ? *b.inputs[i] : "<missing>");
    sent_inputs.push_back(in);
  }
  void succeed(size_t index, std::vector<std::string> outputs) {
    BatchResult r = result_of(index, true);
    r.outputs = std::move(outputs);
    report(r);
  }
  // Some inputs rejected by the model: status[i] != 0 holds that one's error.
  void succeed_with_rejects(size_t index, std::vector<std::string> outputs, std::vector<int> status) {
    BatchResult r = result_of(index, true);
    r.outputs = std::move(outputs);
    r.input_status = std::move(status);
    report(r);
  }
  void fail(size_t index, std::string why) {
    BatchResult r = result_of(index, false);
    r.error = std::move(why);
    report(r);
  }
  std::vector<BatchRequest> started;
  std::vector<std::vector<std::string>> sent_inputs;

 private:
  BatchResult result_of(size_t index, bool ok) const {
    const BatchRequest& b = started.at(index);
    BatchResult r;
    r.worker = b.worker;
    r.model = b.model;
    r.queries = b.queries;
    r.ok = ok;
    return r;
  }
};

class FakeHealth final : public lull::core::WorkerHealth {
 public:
  explicit FakeHealth(int workers) : up_(static_cast<size_t>(workers), true) {}
  int num_workers() const override { return static_cast<int>(up_.size()); }
  bool worker_up(int w) const override { return up_.at(static_cast<size_t>(w)); }
  void set_health_handler(std::function<void(int, bool)> h) override { handler_ = std::move(h); }
  void set(int w, bool up) {
    up_.at(static_cast<size_t>(w)) = up;
    if (handler_) handler_(w, up);
  }

 private:
  std::vector<bool> up_;
  std::function<void(int, bool)> handler_;
};

struct Rig {
  explicit Rig(int workers, std::vector<bool> up = {}, session::ServeOptions options = {})
      : table(tiny_session_table(workers)), health(workers) {
    for (size_t w = 0; w < up.size(); ++w)
      if (!up[w]) health.set(static_cast<int>(w), false);
    options.loop = &loop;
    session = std::make_unique<session::ServeSession>(table, backend, health, clock, std::move(options));
  }
  // The same on another table (its worker count), every worker up.
  Rig(lull::core::PolicyTable t, session::ServeOptions options) : table(std::move(t)), health(table.workers) {
    options.loop = &loop;
    session = std::make_unique<session::ServeSession>(table, backend, health, clock, std::move(options));
  }
  lull::core::PolicyTable table;
  FakeHealth health;
  FakeBackend backend;
  lull::core::VirtualClock clock;
  lull::core::ControlLoop loop{clock};  // the session's reaper (504s): ticked by the test (run_next_due)
  std::unique_ptr<session::ServeSession> session;
};

inline bool ready(const std::future<frontend::Answer>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

inline std::string metric_line(session::ServeSession& s, const std::string& prefix) {
  return testing::metric_line(s.metrics_text(), prefix);
}

}  // namespace lull::serve::testing
