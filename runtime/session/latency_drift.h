#pragma once
// Latency drift at serve time: are the batches the model servers run as fast
// as the profile the policy was compiled from? A profile taken on another
// machine, or under other contention, makes every expectation of the policy
// wrong while nothing else notices (a real-model run saw 0.56 violation against
// 0.054 expected). The rule (docs/operators-guide.md, "Latency drift"): per (model, batch
// size), the p-th percentile (the policy's compile percentile, 95 when
// unknown; at most 95) of the last `window` batches' latencies is compared
// with the profiled lat(m, b); with at least `min_samples` of them, the pair drifts
// when it exceeds the profile by more than `tolerance`, and stops drifting
// when it is back within tolerance / 2 (so it does not flap at the edge).
// Faster than profiled is not drift: it costs accuracy, never the SLO.
//
// Pure: no clock, no lock, no I/O; the serve session times the batches and
// holds its lock around it, so it is tested deterministically.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/policy_table.h"

namespace lull::session {

struct DriftRule {
  int window = 64;          // last batches kept per (model, batch size)
  int min_samples = 20;     // no verdict on fewer
  double percentile = 95;   // the verdict's, of the window, in (0, 100]
  double tolerance = 0.25;  // drift: observed > profiled * (1 + tolerance)
  // The percentile the policy was compiled at; the corrected profile takes
  // this percentile of the window (0: `percentile`). The serve session sets
  // it from the set and judges at min(it, 95): a policy planned with the
  // slowest sample (p100) would otherwise call one slow batch in 64 drift.
  double plan_percentile = 0;
};

// One (model, batch size) pair's state.
struct DriftPair {
  int model = 0;
  int batch = 0;
  double profiled_us = 0;
  double observed_us = 0;       // the verdict's percentile of the window; 0 below min_samples
  double observed_plan_us = 0;  // the plan percentile of the window (the corrected profile's)
  int samples = 0;              // in the window
  bool drifting = false;
};

// What the serve session hands its drift observer when a pair starts
// drifting: the pair, and the profile corrected by everything observed so far.
struct DriftEvent {
  DriftPair pair;
  std::string model;
  std::vector<std::vector<double>> corrected_latency_us;  // corrected_latency_us() below
};

class LatencyDriftDetector {
 public:
  enum class Change { kNone, kStarted, kEnded };

  // One pair per model and profiled batch size (latency_us index b-1).
  // Throws std::invalid_argument on a rule out of range (window < 1,
  // min_samples outside 1..window, percentile outside (0, 100], tolerance <= 0).
  LatencyDriftDetector(const std::vector<core::ModelInfo>& models, DriftRule rule);

  // Records one batch of `batch` queries on `model` that took `latency_us`;
  // says whether the pair started or stopped drifting with it. Batches the
  // profile has no latency for (a fallback batch past N+1) are ignored.
  Change observe(int model, int batch, double latency_us);

  const DriftPair& pair(int model, int batch) const;
  // Pairs with a verdict (at least min_samples), by model then batch size.
  std::vector<DriftPair> judged() const;
  int drifting() const { return drifting_; }
  std::uint64_t drift_starts() const { return starts_; }
  const DriftRule& rule() const { return rule_; }

  // The profile corrected by what was observed, for recompiling: per model,
  // lat(m, b) for b = 1..N+1. A judged pair takes its observed plan
  // percentile (faster ones too); the other sizes of a model keep the profile scaled by
  // the largest observed/profiled ratio among the model's judged pairs, or,
  // for a model with none judged, the largest ratio of any model (at least 1:
  // an unobserved model is never assumed faster). Each model's list is then
  // made non-decreasing in b, as the compiler's latencies are.
  std::vector<std::vector<double>> corrected_latency_us() const;

 private:
  struct Window {
    std::vector<double> ring;  // up to rule_.window latencies
    std::size_t next = 0;      // where the next one goes once full
  };
  // Nearest rank over `values`, which it reorders (nth_element: linear, where
  // sorting the window twice per observed batch showed up in lull's profile).
  static double percentile_of(std::vector<double>& values, double percentile);

  DriftRule rule_;
  std::vector<std::vector<DriftPair>> pairs_;  // [model][batch - 1]
  std::vector<std::vector<Window>> windows_;   // the same shape
  std::vector<double> scratch_;                // a window's copy, for percentile_of
  int drifting_ = 0;
  std::uint64_t starts_ = 0;
};

}  // namespace lull::session
