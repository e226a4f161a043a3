#pragma once
// Where a real backend finds the bytes of each query and leaves its answer.
// The scheduling code only moves QueryIds around; the front end owns the
// payloads (QueryBook) and the TorchServe backend reads and fills them, so
// neither the Backend interface nor the dispatcher sees request bodies.
#include <memory>
#include <string>

#include "runtime/backend.h"

namespace lull::serve {

class QueryPayloads {
 public:
  virtual ~QueryPayloads() = default;
  // The query's input bytes, or nullptr when the query is unknown (already
  // answered or abandoned). Thread-safe.
  virtual std::shared_ptr<const std::string> input(runtime::QueryId id) = 0;
  // The query's prediction (one JSON text), stored before its batch is
  // reported. Thread-safe.
  virtual void set_output(runtime::QueryId id, std::string prediction_json) = 0;
};

}  // namespace lull::serve
