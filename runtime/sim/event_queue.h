#pragma once
// The simulator's future events: the next arrival and at most one batch
// completion per worker, so the heap stays small (K+1 entries). Ties in time
// are served in insertion order, which keeps runs reproducible.
#include <cstdint>
#include <queue>
#include <vector>

namespace lull::sim {

struct SimEvent {
  std::int64_t time_us = 0;
  std::uint64_t seq = 0;
  int worker = -1;          // -1: an arrival; otherwise the worker whose batch completes
  std::uint32_t batch = 0;  // completions: the worker's batch number (a failed batch's event is stale)
};

class EventQueue {
 public:
  void push(std::int64_t time_us, int worker, std::uint32_t batch = 0) {
    heap_.push(SimEvent{time_us, next_seq_++, worker, batch});
  }
  bool empty() const { return heap_.empty(); }
  std::int64_t next_time_us() const { return heap_.top().time_us; }  // requires !empty()
  SimEvent pop() {
    SimEvent e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const SimEvent& a, const SimEvent& b) const {
      return a.time_us != b.time_us ? a.time_us > b.time_us : a.seq > b.seq;
    }
  };
  std::priority_queue<SimEvent, std::vector<SimEvent>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace lull::sim
