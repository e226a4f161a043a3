#pragma once
// The one interface between the scheduling code and whatever runs batches:
// the simulator, the TorchServe client and test fakes implement it, and the
// dispatcher cannot tell them apart.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lull::core {

using QueryId = std::uint64_t;

struct BatchRequest {
  int worker = 0;
  int model = 0;                 // index into the policy set's models
  std::vector<QueryId> queries;  // earliest deadline first
  // Each query's input, in the order of `queries` (nullptr: answered
  // meanwhile, sent empty), filled by whoever owns the queries (the serve
  // session) as it starts the batch. Empty: the backend has no inputs to
  // send (the simulator).
  std::vector<std::shared_ptr<const std::string>> inputs;
};

struct BatchResult {
  int worker = 0;
  int model = 0;
  std::vector<QueryId> queries;
  bool ok = true;  // false: the backend failed the batch
  // ok: each query's prediction (one JSON text), in the order of `queries`.
  // Backends without predictions (the simulator, test fakes) leave it empty.
  std::vector<std::string> outputs;
  // ok: per-query HTTP status where the model rejected that one input (4xx/5xx;
  // outputs[i] then holds the error JSON {"code","type","message"}), 0 where
  // it answered. Empty when every input was answered. Not a worker fault: the
  // batch is not retried and the worker stays in rotation.
  std::vector<int> input_status;
  std::string error;  // !ok: why, for logs and clients
  // Set by the Dispatcher for its observers, never by a backend: the batch
  // re-ran queries whose first batch failed (Dispatcher retries once).
  bool retried = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Starts a batch; completion is reported through the callback given to
  // set_completion_handler, possibly from another thread (real backends) or
  // from the event loop (simulator).
  virtual void start_batch(const BatchRequest& batch) = 0;
  void set_completion_handler(std::function<void(const BatchResult&)> h) { on_done_ = std::move(h); }

 protected:
  void report(const BatchResult& r) {
    if (on_done_) on_done_(r);
  }

 private:
  std::function<void(const BatchResult&)> on_done_;
};

}  // namespace lull::core
