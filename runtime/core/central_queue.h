#pragma once
// The front door: stamps each query's deadline (arrival + SLO) and, for lull's
// scheduler, picks the worker queue strictly round-robin (mdp-spec.md 7).
#include <cstdint>
#include <vector>

#include "runtime/core/query.h"

namespace lull::core {

class CentralQueue {
 public:
  CentralQueue(std::int64_t slo_us, int workers) : slo_us_(slo_us), workers_(workers) {}
  Query stamp(QueryId id, std::int64_t arrival_us) const { return Query{id, arrival_us, arrival_us + slo_us_}; }
  // Round-robin balancer: worker 0, 1, ..., K-1, 0, ...
  int next_worker() {
    const int w = next_;
    next_ = next_ + 1 == workers_ ? 0 : next_ + 1;
    return w;
  }
  // Round-robin over the workers marked available (`available[w]` != 0),
  // skipping the others; when none is, plain round-robin (the query goes
  // somewhere and its backend fails it with a reason). With every worker
  // available this is exactly next_worker().
  int next_available_worker(const std::vector<char>& available) {
    const int w = peek_available_worker(available);
    next_ = w + 1 == workers_ ? 0 : w + 1;
    return w;
  }
  // The worker next_available_worker would return, without advancing.
  int peek_available_worker(const std::vector<char>& available) const {
    for (int i = 0, w = next_; i < workers_; ++i, w = w + 1 == workers_ ? 0 : w + 1)
      if (available[static_cast<std::size_t>(w)]) return w;
    return next_;
  }

 private:
  std::int64_t slo_us_;
  int workers_;
  int next_ = 0;
};

}  // namespace lull::core
