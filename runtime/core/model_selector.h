#pragma once
// The selection hot path: (policy, live queue) -> (model, batch). Pure
// function of immutable data: no locks, no allocation, no I/O, so every
// worker can call it concurrently. Semantics: mdp-spec.md sections 2.3 and 7.
#include <cstdint>

#include "runtime/core/policy_table.h"

namespace lull::core {

struct Selection {
  int model = 0;
  int batch = 0;          // queries to serve, 1..queue_len
  bool fallback = false;  // true: queue longer than N or state missing from the table
};

// Index into CompiledPolicy::actions of the state for a queue of `queue_len`
// (>= 1) queries whose earliest deadline is `min_slack_us` away (negative if
// late); returns the F index when queue_len > N.
int state_index(const CompiledPolicy& policy, int queue_len, std::int64_t min_slack_us);

// Requires queue_len >= 1. Fallback (fastest model 0, serve all) when the
// queue is longer than N or the table has no action for the state.
Selection select_action(const CompiledPolicy& policy, int queue_len, std::int64_t min_slack_us);

}  // namespace lull::core
