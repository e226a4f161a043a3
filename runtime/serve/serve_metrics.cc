#include "runtime/serve/serve_metrics.h"

#include <cstdio>

namespace lull::serve {

namespace {

void metric(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const std::string& name_and_labels, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %.17g\n", value);
  out += name_and_labels;
  out += buf;
}

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out;
}

}  // namespace

std::string render_prometheus(const ServeSnapshot& s) {
  const ServeCounters& c = s.counters;
  std::string out;
  metric(out, "lull_queries_total", "counter", "Queries received.");
  sample(out, "lull_queries_total", static_cast<double>(c.queries));
  metric(out, "lull_answered_total", "counter", "Queries answered with a prediction.");
  sample(out, "lull_answered_total", static_cast<double>(c.answered));
  metric(out, "lull_failed_total", "counter", "Queries answered with an error.");
  sample(out, "lull_failed_total", static_cast<double>(c.failed));
  metric(out, "lull_violations_total", "counter", "Queries answered later than the SLO.");
  sample(out, "lull_violations_total", static_cast<double>(c.violations));
  metric(out, "lull_retried_total", "counter", "Queries retried after a failed batch.");
  sample(out, "lull_retried_total", static_cast<double>(c.retried));
  metric(out, "lull_violation_rate", "gauge", "Late answers over answered queries, since start.");
  sample(out, "lull_violation_rate", c.answered ? static_cast<double>(c.violations) / c.answered : 0);
  metric(out, "lull_accuracy_per_satisfied_query", "gauge",
         "Mean profiled accuracy of the models that answered within the SLO.");
  sample(out, "lull_accuracy_per_satisfied_query", c.satisfied ? c.satisfied_accuracy_sum / c.satisfied : 0);
  metric(out, "lull_model_answers_total", "counter", "Queries answered, by model.");
  for (size_t m = 0; m < s.model_names.size() && m < c.per_model.size(); ++m)
    sample(out, "lull_model_answers_total{model=\"" + escape(s.model_names[m]) + "\"}",
           static_cast<double>(c.per_model[m]));
  metric(out, "lull_slo_ms", "gauge", "The latency SLO served.");
  sample(out, "lull_slo_ms{task=\"" + escape(s.task) + "\"}", s.slo_ms);
  metric(out, "lull_load_estimate_qps", "gauge", "The active load estimate.");
  sample(out, "lull_load_estimate_qps", s.load_estimate_qps);
  metric(out, "lull_policy_load_qps", "gauge", "The compiled load of the active policy.");
  sample(out, "lull_policy_load_qps", s.policy_load_qps);
  metric(out, "lull_policy_expected_accuracy", "gauge", "The active policy's expected accuracy per satisfied query.");
  sample(out, "lull_policy_expected_accuracy", s.expected_accuracy);
  metric(out, "lull_policy_expected_violation_rate", "gauge", "The active policy's expected violation rate.");
  sample(out, "lull_policy_expected_violation_rate", s.expected_violation_rate);
  metric(out, "lull_worker_up", "gauge", "1 while the worker is in rotation.");
  for (size_t w = 0; w < s.workers.size(); ++w)
    sample(out, "lull_worker_up{worker=\"" + std::to_string(w) + "\",url=\"" + escape(s.workers[w].url) + "\"}",
           s.workers[w].up ? 1 : 0);
  metric(out, "lull_worker_queue_length", "gauge", "Queries waiting in the worker's queue.");
  for (size_t w = 0; w < s.workers.size(); ++w)
    sample(out, "lull_worker_queue_length{worker=\"" + std::to_string(w) + "\"}", s.workers[w].queue_length);
  metric(out, "lull_worker_batches_in_flight", "gauge", "Batches sent to the worker and not yet answered.");
  for (size_t w = 0; w < s.workers.size(); ++w)
    sample(out, "lull_worker_batches_in_flight{worker=\"" + std::to_string(w) + "\"}", s.workers[w].batches_in_flight);
  metric(out, "lull_worker_batches_total", "counter", "Batches finished by the worker, by result.");
  for (size_t w = 0; w < s.workers.size(); ++w) {
    sample(out, "lull_worker_batches_total{worker=\"" + std::to_string(w) + "\",result=\"ok\"}",
           static_cast<double>(s.workers[w].batches_ok));
    sample(out, "lull_worker_batches_total{worker=\"" + std::to_string(w) + "\",result=\"failed\"}",
           static_cast<double>(s.workers[w].batches_failed));
  }
  return out;
}

}  // namespace lull::serve
