#include "runtime/sim/result_json.h"

#include <cstdio>
#include <sstream>

namespace lull::sim {
std::string json_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string json_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

namespace {

std::string quoted(const std::string& s) { return json_quoted(s); }
std::string num(double v) { return json_num(v); }

// --autoscale: the settings, the capacity table, the worker count over
// time and every scale event with its reason and log line; the arrival
// patterns capacity was read for, when it followed one.
void autoscale_json(std::ostringstream& o, const AutoscaleReport& a) {
  const auto s = [](std::int64_t us) { return num(static_cast<double>(us) * 1e-6); };
  o << "  \"autoscale\": {\"forecast\": " << quoted(a.forecast) << ", \"lead_s\": " << s(a.options.lead_us)
    << ", \"provisioning\": " << quoted(a.provisioning) << ", \"tick_s\": " << s(a.options.tick_us)
    << ", \"holdoff_s\": " << s(a.options.scale_in_holdoff_us)
    << ", \"step_interval_s\": " << s(a.options.scale_in_interval_us)
    << ", \"hysteresis\": " << num(a.options.hysteresis) << ", \"floor\": " << a.floor << ", \"ceiling\": " << a.ceiling
    << ", \"max_violation\": " << num(a.target.max_violation_rate)
    << ", \"min_accuracy\": " << num(a.target.min_accuracy)
    << ", \"objective\": " << quoted(a.target.objective == manager::CapacityObjective::kPrice ? "price" : "floor")
    << ", \"worker_price\": " << num(a.target.worker_price) << ",\n    \"envelope\": [";
  for (std::size_t i = 0; i < a.options.envelope.size(); ++i)
    o << (i ? ", " : "") << "{\"window_s\": " << s(a.options.envelope[i].window_us)
      << ", \"tolerance\": " << num(a.options.envelope[i].tolerance) << "}";
  o << "],\n    \"capacity\": [";
  for (std::size_t i = 0; i < a.capacity.size(); ++i)
    o << (i ? ", " : "") << "{\"workers\": " << a.capacity[i].workers
      << ", \"capacity_qps\": " << num(a.capacity[i].capacity_qps)
      << ", \"expected_accuracy\": " << num(a.capacity[i].expected_accuracy) << "}";
  o << "]},\n  \"workers_over_time\": [";
  for (std::size_t i = 0; i < a.workers_over_time.size(); ++i) {
    const auto& w = a.workers_over_time[i];
    o << (i ? ",\n" : "\n") << "    {\"t_s\": " << num(w.t_s) << ", \"desired\": " << w.desired
      << ", \"starting\": " << w.starting << ", \"up\": " << w.up << ", \"draining\": " << w.draining << "}";
  }
  o << "\n  ],\n  \"scale_events\": [";
  for (std::size_t i = 0; i < a.scale_events.size(); ++i) {
    const auto& e = a.scale_events[i];
    o << (i ? ",\n" : "\n") << "    {\"t_s\": " << s(e.t_us)
      << ", \"action\": " << quoted(e.action == manager::ScaleDecision::Action::kScaleOut ? "scale_out" : "scale_in")
      << ", \"count\": " << e.count << ", \"reason\": " << quoted(e.reason) << ", \"need\": " << e.need
      << ", \"up\": " << e.before.up << ", \"starting\": " << e.before.starting
      << ", \"forecast_qps\": " << num(e.forecast_qps) << ", \"envelope_qps\": " << num(e.envelope_qps)
      << ", \"capacity_up_qps\": " << num(e.capacity_up_qps) << ", \"log\": " << quoted(a.log[i]) << "}";
  }
  o << (a.scale_events.empty() ? "],\n" : "\n  ],\n");
  // Only when capacity was read for another pattern (a Poisson run's output stays as it was).
  if (a.capacity_patterns.empty()) return;
  o << "  \"capacity_patterns\": [";
  for (std::size_t i = 0; i < a.capacity_patterns.size(); ++i)
    o << (i ? ", " : "") << "{\"t_s\": " << num(a.capacity_patterns[i].t_s)
      << ", \"arrivals\": " << quoted(arrival_process_text(a.capacity_patterns[i].pattern)) << "}";
  o << "],\n";
}

// --variant-sets: the settings, the variants and their models, every switch
// (decided, in use, from, to) and the queries dispatched under each variant,
// by model.
void variants_json(std::ostringstream& o, const VariantReport& v) {
  const auto names = [](const std::vector<std::string>& list) {
    std::string out = "[";
    for (std::size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + quoted(list[i]);
    return out + "]";
  };
  o << "  \"variants\": {\"load\": " << quoted(v.load) << ", \"hysteresis\": " << num(v.hysteresis)
    << ", \"dwell_s\": " << num(v.dwell_s) << ", \"interval_s\": " << num(v.interval_s)
    << ", \"load_delay_s\": " << num(v.load_delay_s) << ",\n    \"sets\": [";
  for (std::size_t i = 0; i < v.names.size(); ++i) {
    o << (i ? ",\n" : "\n") << "      {\"name\": " << quoted(v.names[i]) << ", \"models\": " << names(v.models[i])
      << ", \"queries\": " << v.queries[i] << ", \"queries_by_model\": {";
    for (std::size_t m = 0; m < v.full_models.size(); ++m)
      o << (m ? ", " : "") << quoted(v.full_models[m]) << ": " << v.queries_by_model[i][m];
    o << "}}";
  }
  o << "\n    ],\n    \"switches\": [";
  for (std::size_t i = 0; i < v.switches.size(); ++i) {
    const auto& e = v.switches[i];
    o << (i ? ",\n" : "\n") << "      {\"t_s\": " << num(e.t_s) << ", \"decided_s\": " << num(e.decided_s)
      << ", \"load_qps\": " << num(e.load_qps) << ", \"from\": " << quoted(v.names[static_cast<std::size_t>(e.from)])
      << ", \"to\": " << quoted(v.names[static_cast<std::size_t>(e.to)]) << "}";
  }
  o << "\n    ]},\n";
}

// --shards: each shard's own numbers (the totals above add them up).
void shards_json(std::ostringstream& o, const std::vector<ShardResult>& shards) {
  o << "  \"shards\": [";
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const ShardResult& s = shards[i];
    o << (i ? ",\n" : "\n") << "    {\"shard\": " << quoted(s.label) << ", \"workers\": " << s.workers
      << ", \"queries\": " << s.arrivals << ", \"completed\": " << s.completed << ", \"satisfied\": " << s.satisfied
      << ", \"violated\": " << s.violated << ", \"not_dispatched_at_end\": " << s.not_dispatched_at_end
      << ", \"accuracy_per_satisfied_query\": " << num(s.accuracy_per_satisfied_query)
      << ", \"violation_rate\": " << num(s.violation_rate) << ", \"worker_seconds\": " << num(s.worker_seconds)
      << ", \"new_policy_needed_events\": " << s.new_policy_events << "}";
  }
  o << "\n  ],\n";
}

}  // namespace

std::string result_to_json(const SimResult& r, const core::PolicyTable& table, const RunInfo& info) {
  std::ostringstream o;
  o << "{\n";
  o << "  \"scheduler\": " << quoted(r.scheduler) << ",\n";
  o << "  \"policies\": " << quoted(info.policies_path) << ",\n";
  o << "  \"trace\": " << quoted(info.trace) << ",\n";
  o << "  \"replay\": " << quoted(info.replay) << ",\n";
  o << "  \"arrivals\": " << quoted(info.arrivals) << ",\n";
  o << "  \"latency\": " << quoted(info.latency) << ",\n";
  o << "  \"seed\": " << info.seed << ",\n";
  o << "  \"workers\": " << table.workers << ",\n";
  o << "  \"slo_ms\": " << num(static_cast<double>(table.slo_us) / 1000) << ",\n";
  o << "  \"queries\": " << r.arrivals << ",\n";
  o << "  \"completed\": " << r.completed << ",\n";
  o << "  \"dropped\": " << r.dropped << ",\n";
  o << "  \"not_dispatched_at_end\": " << r.not_dispatched_at_end << ",\n";
  o << "  \"satisfied\": " << r.satisfied << ",\n";
  o << "  \"violated\": " << r.violated << ",\n";
  o << "  \"accuracy_per_satisfied_query\": " << num(r.accuracy_per_satisfied_query) << ",\n";
  o << "  \"violation_rate\": " << num(r.violation_rate) << ",\n";
  o << "  \"new_policy_needed_events\": " << r.new_policy_events << ",\n";
  o << "  \"arrival_pattern\": {\"switches\": " << r.pattern_switches
    << ", \"beyond_library_events\": " << r.pattern_beyond_events << "},\n";
  o << "  \"simulated_s\": " << num(r.simulated_s) << ",\n";
  o << "  \"wall_s\": " << num(r.wall_s) << ",\n";
  o << "  \"plan_wall_s\": " << num(r.plan_wall_s) << ",\n";
  o << "  \"worker_seconds\": " << num(r.worker_seconds) << ",\n";
  o << "  \"compilations\": " << r.compilations << ",\n";
  o << "  \"compile_wall_s\": " << num(r.compile_wall_s) << ",\n";
  // Expected values of every policy (worker count, load) that took
  // decisions, and their average weighted by the queries each served.
  double w_acc = 0, w_viol = 0, w = 0;
  o << "  \"policies_used\": [";
  bool first = true;
  for (const PolicyUse& p : r.policies_used) {  // lull
    o << (first ? "\n" : ",\n") << "    {\"workers\": " << p.workers << ", \"load_qps\": " << num(p.load_qps)
      << ", \"arrivals\": " << quoted(arrival_process_text(p.arrivals)) << ", \"decisions\": " << p.usage.decisions
      << ", \"queries\": " << p.usage.queries << ", \"fallbacks\": " << p.usage.fallbacks
      << ", \"expected_accuracy\": " << num(p.expected_accuracy)
      << ", \"expected_violation_rate\": " << num(p.expected_violation_rate) << "}";
    w_acc += p.expected_accuracy * static_cast<double>(p.usage.queries);
    w_viol += p.expected_violation_rate * static_cast<double>(p.usage.queries);
    w += static_cast<double>(p.usage.queries);
    first = false;
  }
  for (std::size_t g = 0; g < r.plan.size() && g < r.usage.size(); ++g) {  // baselines
    const auto& u = r.usage[g];
    if (u.decisions == 0) continue;
    o << (first ? "\n" : ",\n") << "    {\"load_qps\": " << num(table.policies[g].load_qps)
      << ", \"decisions\": " << u.decisions << ", \"queries\": " << u.queries << ", \"fallbacks\": " << u.fallbacks
      << ", \"model\": " << quoted(table.models[r.plan[g].model].name) << ", \"max_batch\": " << r.plan[g].max_batch
      << "}";
    first = false;
  }
  o << (first ? "],\n" : "\n  ],\n");
  if (!r.offline_trials.empty()) {
    o << "  \"model_switching_offline\": [";
    for (std::size_t i = 0; i < r.offline_trials.size(); ++i) {
      const auto& t = r.offline_trials[i];
      o << (i ? ",\n" : "\n") << "    {\"load_qps\": " << num(table.policies[t.grid_point].load_qps)
        << ", \"model\": " << quoted(table.models[t.model].name) << ", \"max_batch\": " << t.max_batch
        << ", \"queries\": " << t.queries << ", \"violation_rate\": " << num(t.violation_rate) << "}";
    }
    o << "\n  ],\n";
  }
  if (w > 0) {
    o << "  \"expected_accuracy\": " << num(w_acc / w) << ",\n";
    o << "  \"expected_violation_rate\": " << num(w_viol / w) << ",\n";
  }
  if (r.autoscale) autoscale_json(o, *r.autoscale);
  if (r.variants) variants_json(o, *r.variants);
  if (!r.shards.empty()) shards_json(o, r.shards);
  o << "  \"satisfied_per_model\": {";
  for (std::size_t m = 0; m < table.models.size(); ++m)
    o << (m ? ", " : "") << quoted(table.models[m].name) << ": " << r.satisfied_per_model[m];
  o << "}\n}\n";
  return o.str();
}

std::string timeline_to_csv(const SimResult& r) {
  std::ostringstream o;
  o << "second,arrivals,completed,violated,accuracy_per_satisfied_query,load_estimate_qps,policy_load_qps,"
       "policy_expected_violation,gap_cv2,count_dispersion,arrivals_estimate,policy_arrivals\n";
  for (std::size_t s = 0; s < r.timeline.size(); ++s) {
    const auto& t = r.timeline[s];
    const auto sat = t.completed - t.violated;
    o << s << "," << t.arrivals << "," << t.completed << "," << t.violated << ","
      << num(sat ? t.accuracy_sum / static_cast<double>(sat) : 0) << "," << num(t.load_estimate_qps) << ","
      << num(t.grid_load_qps) << "," << num(t.expected_violation) << ",";
    if (t.estimate_ready)
      o << num(t.gap_cv2) << "," << num(t.count_dispersion) << "," << arrival_estimate_text(t.estimate) << ",";
    else
      o << ",,,";
    o << arrival_process_text(t.policy_arrivals) << "\n";
  }
  return o.str();
}

}  // namespace lull::sim
