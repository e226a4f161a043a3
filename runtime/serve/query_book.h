#pragma once
// The queries the front end is waiting on: each one's input bytes, its answer
// once a batch brings it, and the promise its HTTP handler thread blocks on.
// The TorchServe backend reads inputs and writes answers through the
// QueryPayloads side; the serve session completes queries.
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/serve/query_payloads.h"

namespace lull::serve {

struct QueryOutcome {
  bool ok = false;
  std::string prediction_json;  // ok only
  std::string model;            // the model that answered (ok only)
  int worker = -1;
  bool retried = false;
  std::string error;            // !ok: why, for the client
};

class QueryBook final : public QueryPayloads {
 public:
  // Registers a new query; the future is fulfilled by complete().
  std::pair<runtime::QueryId, std::future<QueryOutcome>> add(std::string input);
  // Fulfils the query's promise and forgets it; false if it was unknown.
  bool complete(runtime::QueryId id, QueryOutcome outcome);
  // Forgets a query whose client gave up.
  void abandon(runtime::QueryId id);
  // The prediction a batch stored, or "" (and removes nothing).
  std::string output(runtime::QueryId id);
  size_t pending() const;

  std::shared_ptr<const std::string> input(runtime::QueryId id) override;
  void set_output(runtime::QueryId id, std::string prediction_json) override;

 private:
  struct Entry {
    std::shared_ptr<const std::string> input;
    std::string output;
    std::promise<QueryOutcome> promise;
  };
  mutable std::mutex mu_;
  runtime::QueryId next_id_ = 0;
  std::unordered_map<runtime::QueryId, Entry> entries_;
};

}  // namespace lull::serve
