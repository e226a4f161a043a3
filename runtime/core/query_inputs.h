#pragma once
// The input bytes of the queries in flight, by QueryId. The scheduling code
// moves only ids, so the serve session stores each query's input here when
// it arrives (and drops it once answered) and the TorchServe backend reads
// it when it encodes a batch. Predictions travel back in the BatchResult.
// Thread-safe: HTTP threads write, the backend reads from the dispatcher's.
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/core/backend.h"

namespace lull::core {

class QueryInputs {
 public:
  void put(QueryId id, std::string input);
  // The query's input, or nullptr when it is unknown (answered or abandoned).
  std::shared_ptr<const std::string> get(QueryId id) const;
  void erase(QueryId id);
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<QueryId, std::shared_ptr<const std::string>> inputs_;
};

}  // namespace lull::core
