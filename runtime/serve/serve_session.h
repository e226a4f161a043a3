#pragma once
// `lull serve` without the sockets: the policy table, lull's Dispatcher, the
// TorchServe backend and the queries in flight, glued together and made
// thread-safe. HTTP threads call serve(); batch completions arrive on the
// HTTP client's thread; one mutex serializes both around the Dispatcher,
// which is single-threaded by design.
//
// Failures: a failed batch's queries are retried once, as one batch on the
// next worker that is up, with the batch's model if the earliest deadline
// still allows it and the fastest model (model 0) otherwise. A query that
// fails twice, or finds no worker up, is answered 503 with the reason.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/clock.h"
#include "runtime/dispatcher.h"
#include "runtime/policy_table.h"
#include "runtime/serve/frontend.h"
#include "runtime/serve/query_book.h"
#include "runtime/serve/serve_metrics.h"
#include "runtime/serve/torchserve_backend.h"

namespace lull::serve {

struct ServeOptions {
  TorchServeOptions backend;
  std::int64_t answer_timeout_ms = 30000;  // an HTTP thread never waits longer (then 504)
  bool check_models = true;                // management-API check at start()
};

class ServeSession final : public QueryService {
 public:
  // `table` must outlive the session; it names the models and the SLO.
  ServeSession(const runtime::PolicyTable& table, std::vector<WorkerEndpoint> workers, ServeOptions options = {});
  ~ServeSession() override;

  // Checks every model is loaded on every worker (throws ModelCheckError
  // naming what is missing) and pings the workers; throws if none is up.
  void start();
  // Answers every query still waiting with 503, so HTTP threads return.
  void shutdown();

  Answer serve(std::string input) override;
  std::string metrics_text() override;

 private:
  // What the Dispatcher sees as its backend: queues the batches it starts
  // (under mu_) for send_outbox, and hands completions back under mu_.
  class Relay final : public runtime::Backend {
   public:
    explicit Relay(ServeSession& s) : s_(s) {}
    void start_batch(const runtime::BatchRequest& b) override { s_.outbox_.push_back(b); }
    void deliver(const runtime::BatchResult& r) { report(r); }

   private:
    ServeSession& s_;
  };
  struct Meta {
    std::int64_t arrival_us = 0;
    bool retried = false;
  };

  void on_backend_done(const runtime::BatchResult& r);                   // client thread
  void on_health(int worker, bool up);                                   // client thread
  // Sends the batches queued while `lock` (on mu_) was held, after releasing it.
  void send_outbox(std::unique_lock<std::mutex>& lock);
  void on_dispatcher_done(const runtime::BatchResult& r);                 // under mu_
  void retry_or_fail(const runtime::BatchResult& failed, const std::string& why);  // under mu_
  void answer_ok(runtime::QueryId id, int model, int worker);            // under mu_
  void answer_error(runtime::QueryId id, const std::string& why);        // under mu_
  int next_up_worker(int after) const;

  const runtime::PolicyTable& table_;
  ServeOptions options_;
  runtime::WallClock clock_;
  QueryBook book_;
  std::vector<WorkerEndpoint> workers_;
  std::unique_ptr<TorchServeBackend> backend_;
  Relay relay_;
  runtime::Dispatcher dispatcher_;

  std::mutex mu_;
  bool shut_down_ = false;
  std::unordered_map<runtime::QueryId, Meta> meta_;
  std::unordered_set<runtime::QueryId> retry_batches_;  // first query of each retry batch in flight
  std::vector<runtime::BatchRequest> outbox_;           // started under mu_, sent after it
  ServeCounters counters_;
};

}  // namespace lull::serve
