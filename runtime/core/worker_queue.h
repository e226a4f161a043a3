#pragma once
// A worker's queue, kept in deadline order so the earliest deadline is at the
// front. With one SLO for all queries, round-robin arrivals are already in
// deadline order and insertion is O(1); the backward scan only matters for
// out-of-order arrivals.
#include <cstddef>
#include <deque>
#include <vector>

#include "runtime/core/query.h"

namespace lull::core {

class WorkerQueue {
 public:
  void push(const Query& q) {
    auto it = items_.end();
    while (it != items_.begin() && std::prev(it)->deadline_us > q.deadline_us) --it;
    items_.insert(it, q);
  }
  bool empty() const { return items_.empty(); }
  int size() const { return static_cast<int>(items_.size()); }
  const Query& front() const { return items_.front(); }
  // Moves the `count` earliest-deadline queries' ids into `out` (cleared first).
  void pop_front(int count, std::vector<QueryId>& out) {
    out.clear();
    for (int i = 0; i < count && !items_.empty(); ++i) {
      out.push_back(items_.front().id);
      items_.pop_front();
    }
  }
  // Moves every query, in deadline order, into `out` (cleared first).
  void drain(std::vector<Query>& out) {
    out.assign(items_.begin(), items_.end());
    items_.clear();
  }

 private:
  std::deque<Query> items_;
};

}  // namespace lull::core
