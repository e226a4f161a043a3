#pragma once
// The bouncer (MArk-style admission control, `lull serve --reject-late`):
// refuse at once a query whose deadline cannot be met even by the
// fastest model, instead of serving it late. A pure function of numbers the
// Dispatcher already keeps, so it costs O(1) per arrival and needs no lock
// of its own (the caller holds whatever guards those numbers).
//
// "Cannot be met", precisely: the query would join worker w's queue (the one
// round-robin picks next) behind q queries. Its earliest possible completion
// is
//   now + busy_remaining(w) + drain(q + 1)
// where busy_remaining is what is left of w's batch in flight (lat(model,
// batch) from its start, 0 if idle or overrun) and drain(n) serves n queries
// on the fastest model (model 0) in batches of B, the largest batch in its
// latency table: floor(n / B) * lat(0, B) + lat(0, n mod B) (the last term
// 0 when n mod B = 0). The query is refused when that completion is past its
// deadline. It is an optimistic bound (no policy ever drains a queue faster
// than the fastest model at its largest batch, given the usual profile where
// lat(0, b) / b falls with b), so a refused query would surely have been late
// and an admitted one may still be.
#include <cstdint>
#include <vector>

namespace lull::core {

struct AdmissionInput {
  std::int64_t now_us = 0;
  std::int64_t deadline_us = 0;        // arrival + SLO
  std::int64_t busy_remaining_us = 0;  // of the worker's batch in flight; 0 if idle
  int queued_ahead = 0;                // queries already in the worker's queue
};

struct AdmissionVerdict {
  bool admit = true;
  std::int64_t earliest_completion_us = 0;  // now + busy_remaining + drain(queued_ahead + 1)
};

// `fastest_latency_us` holds lat(0, b) at index b-1 (ModelInfo::latency_us of
// model 0); must not be empty.
AdmissionVerdict admit_query(const AdmissionInput& in, const std::vector<double>& fastest_latency_us);

// Whole seconds a refused client should wait before retrying (Retry-After):
// until the worker's present backlog would have drained, at least 1.
int retry_after_seconds(const AdmissionInput& in, const AdmissionVerdict& v);

}  // namespace lull::core
