#include "runtime/session/serve_metrics.h"

#include <cstdio>

#include "runtime/frontend/build_info.h"
#include "runtime/session/process_metrics.h"
#include "runtime/net/prometheus_text.h"

namespace lull::session {

namespace {

using net::prom::family;
using net::prom::sample;

std::string model_label(const std::string& model) { return "{model=\"" + net::prom::escape(model) + "\"}"; }

void per_model(std::string& out, const char* name, const char* help, const ServeSnapshot& s,
               const std::vector<std::uint64_t>& values) {
  family(out, name, "counter", help);
  for (size_t m = 0; m < s.model_names.size() && m < values.size(); ++m)
    sample(out, name + model_label(s.model_names[m]), static_cast<double>(values[m]));
}

void histogram(std::string& out, const char* name, const char* help, const LatencyHistogram& h) {
  family(out, name, "histogram", help);
  const std::string base = name;
  std::uint64_t cumulative = 0;
  char le[64];
  for (size_t b = 0; b < h.bucket_counts.size(); ++b) {
    cumulative += h.bucket_counts[b];
    if (b < h.upper_bounds_s.size())
      std::snprintf(le, sizeof le, "%.9g", h.upper_bounds_s[b]);
    else
      std::snprintf(le, sizeof le, "+Inf");
    sample(out, base + "_bucket{le=\"" + le + "\"}", static_cast<double>(cumulative));
  }
  sample(out, base + "_sum", h.sum_s);
  sample(out, base + "_count", static_cast<double>(h.count));
}

void drift(std::string& out, const ServeSnapshot& s) {
  if (!s.drift.enabled) return;
  family(out, "lull_latency_drift_pairs", "gauge",
         "(model, batch size) pairs whose observed batch latency percentile exceeds the profile by more than the "
         "tolerance now.");
  sample(out, "lull_latency_drift_pairs", s.drift.drifting);
  family(out, "lull_latency_drift_total", "counter", "Times a (model, batch size) pair started drifting.");
  sample(out, "lull_latency_drift_total", static_cast<double>(s.drift.starts));
  const auto labels = [&](const DriftPair& p) {
    const std::string name = static_cast<size_t>(p.model) < s.model_names.size() ? s.model_names[p.model] : "";
    return "{model=\"" + net::prom::escape(name) + "\",batch=\"" + std::to_string(p.batch) + "\"}";
  };
  family(out, "lull_batch_latency_observed_seconds", "gauge",
         "The drift rule's percentile of the last batches' send-to-answer time, by model and batch size (pairs with "
         "enough batches).");
  for (const auto& p : s.drift.pairs)
    sample(out, "lull_batch_latency_observed_seconds" + labels(p), p.observed_us / 1e6);
  family(out, "lull_batch_latency_profiled_seconds", "gauge", "The policy's latency for the same pairs.");
  for (const auto& p : s.drift.pairs)
    sample(out, "lull_batch_latency_profiled_seconds" + labels(p), p.profiled_us / 1e6);
}

}  // namespace

std::string render_prometheus(const ServeSnapshot& s) {
  const ServeCounters& c = s.counters;
  std::string out;
  family(out, "lull_queries_total", "counter", "Queries received by the serve session.");
  sample(out, "lull_queries_total", static_cast<double>(c.queries));
  per_model(out, "lull_answered_total", "Queries answered with a prediction, by model.", s, c.per_model);
  per_model(out, "lull_violations_total", "Queries answered later than the SLO, by model.", s, c.per_model_violations);
  per_model(out, "lull_satisfied_total", "Queries answered within the SLO, by model.", s, c.per_model_satisfied);
  family(out, "lull_satisfied_accuracy_total", "counter",
         "Sum of the answering models' profiled accuracy over queries answered within the SLO; "
         "divided by lull_satisfied_total it is the accuracy per satisfied query.");
  sample(out, "lull_satisfied_accuracy_total", c.satisfied_accuracy_sum);
  family(out, "lull_failed_total", "counter", "Queries answered with an error (503 or 504).");
  sample(out, "lull_failed_total", static_cast<double>(c.failed));
  family(out, "lull_rejected_total", "counter",
         "Queries refused on arrival (503 with Retry-After) because even the fastest model could not meet their "
         "deadline (--reject-late).");
  sample(out, "lull_rejected_total", static_cast<double>(c.rejected));
  family(out, "lull_retried_total", "counter", "Queries retried after a failed batch.");
  sample(out, "lull_retried_total", static_cast<double>(c.retried));
  histogram(out, "lull_request_duration_seconds",
            "Arrival to answer of queries answered with a prediction; buckets are fractions and multiples of the SLO.",
            c.latency);
  family(out, "lull_slo_seconds", "gauge", "The latency SLO served.");
  sample(out, "lull_slo_seconds{task=\"" + net::prom::escape(s.task) + "\"}", s.slo_seconds);
  family(out, "lull_load_estimate_queries_per_second", "gauge", "The dispatcher's active load estimate.");
  sample(out, "lull_load_estimate_queries_per_second", s.load_estimate_qps);
  family(out, "lull_policy_load_queries_per_second", "gauge", "The compiled load of the active policy.");
  sample(out, "lull_policy_load_queries_per_second", s.policy_load_qps);
  family(out, "lull_policy_workers", "gauge", "The worker count the active policy was compiled for.");
  sample(out, "lull_policy_workers", s.policy_workers);
  family(out, "lull_policy_arrivals_info", "gauge",
         "1, labelled with the arrival process the active policy was compiled for.");
  sample(out, "lull_policy_arrivals_info{arrivals=\"" + net::prom::escape(s.policy_arrivals) + "\"}", 1);
  // The burstiness estimate (runtime/core/burstiness_estimator.h); 0 until a full window is seen.
  family(out, "lull_arrival_estimate_ready", "gauge",
         "1 once the burstiness estimate covers a full window of arrivals.");
  sample(out, "lull_arrival_estimate_ready", s.arrivals.ready ? 1 : 0);
  family(out, "lull_arrival_gap_cv2", "gauge", "Squared coefficient of variation of the recent inter-arrival gaps.");
  sample(out, "lull_arrival_gap_cv2", s.arrivals.gap_cv2);
  family(out, "lull_arrival_count_dispersion", "gauge",
         "Index of dispersion (variance over mean) of recent arrival counts in bins of about 20 arrivals.");
  sample(out, "lull_arrival_count_dispersion", s.arrivals.dispersion);
  family(out, "lull_arrival_burstiness", "gauge",
         "The estimated arrival pattern's burstiness (gamma CV^2 or batch dispersion; 1 for Poisson), labelled with "
         "its family.");
  sample(out,
         "lull_arrival_burstiness{family=\"" +
             std::string(s.arrivals.process.kind == ArrivalProcess::Kind::kBatch   ? "batch"
                         : s.arrivals.process.kind == ArrivalProcess::Kind::kGamma ? "gamma"
                                                                                   : "poisson") +
             "\"}",
         s.arrivals.process.burstiness());
  family(out, "lull_arrival_rate_cv2", "gauge",
         "The arrival rate's modulation over the same window: its variance over its mean squared, across blocks of "
         "about 200 arrivals, net of the short-range burstiness (0 for a steady rate).");
  sample(out, "lull_arrival_rate_cv2", s.arrival_rate_cv2);
  family(out, "lull_arrival_pattern_switches_total", "counter",
         "Changes of the arrival pattern the policy is chosen for.");
  sample(out, "lull_arrival_pattern_switches_total", static_cast<double>(s.pattern_switches));
  if (s.online_compile) {
    family(out, "lull_online_compilations_total", "counter",
           "Policies compiled online and swapped in (--online-compile on).");
    sample(out, "lull_online_compilations_total", static_cast<double>(s.compilations));
    family(out, "lull_online_compile_failures_total", "counter", "Online compilations that failed (logged on stderr).");
    sample(out, "lull_online_compile_failures_total", static_cast<double>(s.compile_failures));
    family(out, "lull_online_compile_seconds_total", "counter",
           "Wall time of the online compilations; over lull_online_compilations_total, the mean latency.");
    sample(out, "lull_online_compile_seconds_total", s.compile_seconds_sum);
    family(out, "lull_online_compile_last_seconds", "gauge", "Wall time of the latest online compilation.");
    sample(out, "lull_online_compile_last_seconds", s.compile_last_seconds);
  }
  family(out, "lull_drift_recompilations_total", "counter",
         "Policy sets recompiled from observed latencies and swapped in (--recompile-on-drift).");
  sample(out, "lull_drift_recompilations_total", static_cast<double>(s.policy_replacements));
  family(out, "lull_policy_expected_accuracy_ratio", "gauge",
         "The active policy's expected accuracy per satisfied query.");
  sample(out, "lull_policy_expected_accuracy_ratio", s.expected_accuracy);
  family(out, "lull_policy_expected_violation_ratio", "gauge", "The active policy's expected violation rate.");
  sample(out, "lull_policy_expected_violation_ratio", s.expected_violation_rate);
  family(out, "lull_worker_up", "gauge", "1 while the worker is in rotation.");
  for (size_t w = 0; w < s.workers.size(); ++w)
    sample(out,
           "lull_worker_up{worker=\"" +
               std::to_string(s.workers[w].slot >= 0 ? s.workers[w].slot : static_cast<int>(w)) + "\",url=\"" +
               net::prom::escape(s.workers[w].url) + "\"}",
           s.workers[w].up ? 1 : 0);
  family(out, "lull_worker_queue_length", "gauge", "Queries waiting in the worker's queue.");
  for (size_t w = 0; w < s.workers.size(); ++w)
    sample(out,
           "lull_worker_queue_length{worker=\"" +
               std::to_string(s.workers[w].slot >= 0 ? s.workers[w].slot : static_cast<int>(w)) + "\"}",
           s.workers[w].queue_length);
  family(out, "lull_worker_batches_in_flight", "gauge", "Batches sent to the worker and not yet answered.");
  for (size_t w = 0; w < s.workers.size(); ++w)
    sample(out,
           "lull_worker_batches_in_flight{worker=\"" +
               std::to_string(s.workers[w].slot >= 0 ? s.workers[w].slot : static_cast<int>(w)) + "\"}",
           s.workers[w].batches_in_flight);
  family(out, "lull_worker_batches_total", "counter", "Batches finished by the worker, by result.");
  for (size_t w = 0; w < s.workers.size(); ++w) {
    sample(out,
           "lull_worker_batches_total{worker=\"" +
               std::to_string(s.workers[w].slot >= 0 ? s.workers[w].slot : static_cast<int>(w)) + "\",result=\"ok\"}",
           static_cast<double>(s.workers[w].batches_ok));
    sample(out,
           "lull_worker_batches_total{worker=\"" +
               std::to_string(s.workers[w].slot >= 0 ? s.workers[w].slot : static_cast<int>(w)) +
               "\",result=\"failed\"}",
           static_cast<double>(s.workers[w].batches_failed));
  }
  // Outlier ejection (--eject-*): per worker, and how many are out now.
  const auto worker_label = [&s](size_t w) {
    return "{worker=\"" + std::to_string(s.workers[w].slot >= 0 ? s.workers[w].slot : static_cast<int>(w)) + "\"}";
  };
  family(out, "lull_worker_ejections_total", "counter",
         "Times consecutive failed batches (5xx, timeouts, undecodable answers) ejected the worker.");
  int ejected = 0;
  for (size_t w = 0; w < s.workers.size(); ++w) {
    sample(out, "lull_worker_ejections_total" + worker_label(w), static_cast<double>(s.workers[w].ejections));
    ejected += s.workers[w].ejected ? 1 : 0;
  }
  family(out, "lull_workers_ejected", "gauge",
         "Workers out of rotation now because of an outlier ejection (until its time is over and a ping passes).");
  sample(out, "lull_workers_ejected", ejected);
  drift(out, s);
  out += frontend::render_build_info();
  out += render_process_metrics();
  return out;
}

}  // namespace lull::session
