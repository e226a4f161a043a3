#pragma once
// /metrics for `lull serve`: counters kept by the session and a snapshot of
// live state, rendered in Prometheus' text exposition format (version 0.0.4).
// Everything that changes per query is a counter or a histogram in base
// units (seconds), so rates over any window come from PromQL; gauges are only
// for live state. docs/operators-guide.md lists the PromQL for p99, violation rate,
// accuracy and queries per second.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/burstiness_estimator.h"
#include "runtime/session/latency_drift.h"
#include "runtime/session/latency_histogram.h"

namespace lull::session {

struct ServeCounters {
  std::uint64_t queries = 0;                        // arrived
  std::uint64_t answered = 0;                       // with a prediction
  std::uint64_t failed = 0;                         // answered with an error
  std::uint64_t rejected = 0;                       // refused on arrival by the bouncer (503, not in `failed`)
  std::uint64_t violations = 0;                     // answered later than the SLO
  std::uint64_t retried = 0;                        // queries sent a second time
  std::uint64_t satisfied = 0;                      // answered within the SLO
  double satisfied_accuracy_sum = 0;                // sum of the models' accuracies over satisfied queries
  std::vector<std::uint64_t> per_model;             // answered, by model index
  std::vector<std::uint64_t> per_model_violations;  // answered late, by model index
  std::vector<std::uint64_t> per_model_satisfied;   // answered within the SLO, by model index
  LatencyHistogram latency;                         // arrival to answer, of answered queries
};

struct WorkerSnapshot {
  int slot = -1;  // the worker label: the Dispatcher's slot (-1: its position in the list)
  std::string url;
  bool up = false;
  int queue_length = 0;
  int batches_in_flight = 0;
  std::uint64_t batches_ok = 0;
  std::uint64_t batches_failed = 0;
  std::uint64_t ejections = 0;  // outlier ejections of the slot's workers so far
  bool ejected = false;         // out of rotation now for an ejection
};

// Latency drift (runtime/session/latency_drift.h), when detection is on.
struct DriftSnapshot {
  bool enabled = false;
  std::vector<DriftPair> pairs;  // those with a verdict
  int drifting = 0;
  std::uint64_t starts = 0;
};

struct ServeSnapshot {
  std::string task;
  double slo_seconds = 0;
  ServeCounters counters;
  std::vector<std::string> model_names;
  double load_estimate_qps = 0;
  double policy_load_qps = 0;
  int policy_workers = 0;                   // the worker count the active policy was compiled for
  std::string policy_arrivals = "poisson";  // the arrival process it was compiled for
  core::BurstinessEstimate arrivals;        // the dispatcher's estimate of the arrivals' pattern
  double arrival_rate_cv2 = 0;              // the modulation beside it (BurstinessEstimator::rate_cv2)
  std::uint64_t pattern_switches = 0;       // changes of the pattern the policy is chosen for
  bool online_compile = false;              // the online compilation families are shown
  std::uint64_t compilations = 0, compile_failures = 0;
  double compile_seconds_sum = 0, compile_last_seconds = 0;
  double expected_accuracy = 0;
  double expected_violation_rate = 0;
  std::uint64_t policy_replacements = 0;  // recompiled sets swapped in (--recompile-on-drift)
  std::vector<WorkerSnapshot> workers;
  DriftSnapshot drift;
};

// The session's families, then build info and process metrics.
std::string render_prometheus(const ServeSnapshot& s);

}  // namespace lull::session
