#pragma once
// The front door: stamps each query's deadline (arrival + SLO) and, for lull's
// scheduler, picks the worker queue strictly round-robin (mdp-spec.md 7).
#include <cstdint>

#include "runtime/query.h"

namespace lull::runtime {

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

 private:
  std::int64_t slo_us_;
  int workers_;
  int next_ = 0;
};

}  // namespace lull::runtime
