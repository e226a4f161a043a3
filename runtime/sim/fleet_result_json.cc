#include "runtime/sim/fleet_result_json.h"

#include <sstream>

namespace lull::sim {
namespace {

std::string num(double v) { return json_num(v); }
std::string quoted(const std::string& s) { return json_quoted(s); }

void mix_fields(std::ostringstream& o, const FleetMix& m, const std::string& indent) {
  o << indent << "\"queries\": " << m.arrivals << ", \"completed\": " << m.completed
    << ", \"satisfied\": " << m.satisfied << ", \"violated\": " << m.violated << ", \"dropped\": " << m.dropped
    << ", \"not_dispatched_at_end\": " << m.not_dispatched_at_end << ",\n"
    << indent << "\"accuracy_per_satisfied_query\": " << num(m.accuracy_per_satisfied_query)
    << ", \"violation_rate\": " << num(m.violation_rate) << ",\n"
    << indent << "\"expected_accuracy\": " << num(m.expected_accuracy)
    << ", \"expected_violation_rate\": " << num(m.expected_violation_rate) << ",\n"
    << indent << "\"worker_seconds\": " << num(m.worker_seconds) << ", \"cost\": " << num(m.cost);
}

}  // namespace

std::string fleet_result_to_json(const FleetSimResult& r, const RunInfo& info) {
  std::ostringstream o;
  o << "{\n  \"policies\": " << quoted(info.policies_path) << ",\n  \"trace\": " << quoted(info.trace)
    << ",\n  \"replay\": " << quoted(info.replay) << ",\n  \"arrivals\": " << quoted(info.arrivals)
    << ",\n  \"latency\": " << quoted(info.latency) << ",\n  \"seed\": " << info.seed
    << ",\n  \"run_s\": " << num(r.run_s) << ",\n  \"fleet\": {\n";
  mix_fields(o, r.fleet, "    ");
  o << "\n  },\n  \"classes\": [";
  for (std::size_t c = 0; c < r.classes.size(); ++c) {
    const auto& cls = r.classes[c];
    o << (c ? ",\n" : "\n") << "    {\"name\": " << quoted(cls.name) << ", \"slo_ms\": " << num(cls.slo_ms)
      << ", \"share\": " << num(cls.share) << ", \"mean_load_qps\": " << num(cls.mean_load_qps)
      << ", \"split_passes\": " << cls.split_passes
      << ", \"split_converged\": " << (cls.split_converged ? "true" : "false") << ",\n";
    mix_fields(o, cls.mix, "     ");
    o << ",\n     \"kinds\": [";
    for (std::size_t k = 0; k < cls.groups.size(); ++k) {
      const auto& g = cls.groups[k];
      std::string group = result_to_json(g.result, *g.table, info);
      while (!group.empty() && group.back() == '\n') group.pop_back();
      o << (k ? ",\n" : "\n") << "      {\"kind\": " << quoted(g.kind) << ", \"workers\": " << g.workers
        << ", \"price_per_s\": " << num(g.price_per_s) << ", \"weight\": " << num(g.weight)
        << ", \"worker_seconds\": " << num(g.worker_seconds) << ", \"cost\": " << num(g.cost)
        << ",\n       \"result\": " << group << "}";
    }
    o << "\n     ]}";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

}  // namespace lull::sim
