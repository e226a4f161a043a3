#include "cli/fleet_report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <map>

#include "cli/json_object.h"

namespace lull::cli {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// "0.8123/0.0081" (accuracy/violation), or "beyond capacity".
std::string cell(const ClassSplit& s) {
  if (s.expected.beyond_capacity) return "beyond capacity";
  return format("%.4f/%.4f%s", s.expected.accuracy, s.expected.violation_rate, s.meets ? "" : " x");
}

std::string class_header(const schema::FleetClassPolicies& c) {
  std::string kinds;
  for (const auto& k : c.kinds()) kinds += format("%s%s x%u", kinds.empty() ? "" : ", ", k.kind().c_str(), k.workers());
  return format("class %s: SLO %g ms, share %g, violation <= %g; workers %s\n", c.name().c_str(), c.slo_ms(), c.share(),
                c.max_violation(), kinds.c_str());
}

JsonValue expectation_json(const ClassSplit& s) {
  JsonValue o = JsonValue::object();
  o.add("accuracy", s.expected.accuracy);
  o.add("violation_rate", s.expected.violation_rate);
  o.add("beyond_capacity", s.expected.beyond_capacity ? "yes" : "no");
  o.add("meets", s.meets ? "yes" : "no");
  return o;
}

}  // namespace

std::string fleet_compile_table(const schema::FleetPolicy& fleet,
                                const std::vector<compiler::FleetSplitReport>& splits) {
  std::string out;
  for (const auto& c : fleet.classes()) {
    out += class_header(c);
    std::string head = "  load QPS";
    for (const auto& k : c.kinds()) head += format("  %8s", ("w:" + k.kind()).c_str());
    head += "  accuracy  violation  meets";
    for (const auto& k : c.kinds()) head += format("  %-20s", (k.kind() + " alone").c_str());
    out += head.erase(head.find_last_not_of(' ') + 1) + "\n";
    for (const auto& s : splits) {
      if (s.class_name != c.name()) continue;
      std::string row = format("  %8.1f", s.class_load_qps);
      for (double w : s.chosen.weights) row += format("  %8.2f", w);
      row += format("  %8.4f  %9.4f  %-5s", s.chosen.expected.accuracy, s.chosen.expected.violation_rate,
                    s.chosen.expected.beyond_capacity ? "beyond"
                    : s.chosen.meets                  ? "yes"
                                                      : "no");
      for (const auto& a : s.alone) row += format("  %-20s", cell(a).c_str());
      if (s.fixed) row += "  (fixed weights)";
      if (s.has_served)
        row += format("  served %.4f/%.4f", s.served.expected.accuracy, s.served.expected.violation_rate);
      out += row.erase(row.find_last_not_of(' ') + 1) + "\n";
    }
    out += "\n";
  }
  out += "(alone: accuracy/violation with all of the class's load on that kind's workers; x: misses the target)\n";
  if (!splits.empty() && splits.front().has_served)
    out +=
        "(served: the chosen weights' accuracy/violation through each kind's 500 ms load estimate, --expect-lag on)\n";
  return out;
}

std::string fleet_compile_json(const schema::FleetPolicy& fleet,
                               const std::vector<compiler::FleetSplitReport>& splits) {
  JsonValue root = JsonValue::object();
  JsonValue& classes = root.add("classes", JsonValue::array());
  for (const auto& c : fleet.classes()) {
    JsonValue& jc = classes.push(JsonValue::object());
    jc.add("name", c.name());
    jc.add("slo_ms", c.slo_ms());
    jc.add("share", c.share());
    jc.add("max_violation", c.max_violation());
    JsonValue& kinds = jc.add("kinds", JsonValue::array());
    for (const auto& k : c.kinds()) {
      JsonValue& jk = kinds.push(JsonValue::object());
      jk.add("kind", k.kind());
      jk.add("workers", static_cast<double>(k.workers()));
      jk.add("price_per_s", k.price_per_s());
    }
    JsonValue& js = jc.add("splits", JsonValue::array());
    for (const auto& s : splits) {
      if (s.class_name != c.name()) continue;
      JsonValue& row = js.push(JsonValue::object());
      row.add("load_qps", s.class_load_qps);
      JsonValue& w = row.add("weights", JsonValue::object());
      for (int k = 0; k < c.kinds_size(); ++k) w.add(c.kinds(k).kind(), s.chosen.weights[static_cast<std::size_t>(k)]);
      row.add("expected", expectation_json(s.chosen));
      if (s.has_served) row.add("served", expectation_json(s.served));
      row.add("fixed_weights", s.fixed ? "yes" : "no");
      JsonValue& alone = row.add("alone", JsonValue::object());
      for (int k = 0; k < c.kinds_size(); ++k)
        alone.add(c.kinds(k).kind(), expectation_json(s.alone[static_cast<std::size_t>(k)]));
    }
  }
  return root.text() + "\n";
}

namespace {

std::string mix_row(const std::string& label, const compiler::FleetMix& m) {
  std::string row = format("  %-12s", label.c_str());
  if (!m.found) return row + "  no count up to --max-workers meets the target\n";
  for (int w : m.workers) row += w > 0 ? format("  %6d", w) : format("  %6s", "-");
  for (double w : m.weights) row += format("  %6.2f", w);
  return row + format("  %9.2f  %8.4f  %9.4f\n", m.cost_per_s, m.expected.accuracy, m.expected.violation_rate);
}

JsonValue mix_json(const compiler::FleetClassPlan& c, const compiler::FleetMix& m) {
  JsonValue o = JsonValue::object();
  o.add("found", m.found ? "yes" : "no");
  JsonValue workers = JsonValue::object(), weights = JsonValue::object();  // filled before adding: add may move
  for (std::size_t k = 0; k < c.kinds.size(); ++k) {
    workers.add(c.kinds[k], static_cast<double>(m.workers[k]));
    weights.add(c.kinds[k], m.weights[k]);
  }
  o.add("workers", workers);
  o.add("weights", weights);
  o.add("cost_per_s", m.cost_per_s);
  o.add("expected_accuracy", m.expected.accuracy);
  o.add("expected_violation_rate", m.expected.violation_rate);
  return o;
}

// The cheapest mix served through its kinds' load estimates (--expect-lag on).
JsonValue served_json(const compiler::FleetClassPlan& c) {
  JsonValue o = JsonValue::object();
  o.add("accuracy", c.served.accuracy);
  o.add("violation_rate", c.served.violation_rate);
  o.add("beyond_capacity", c.served.beyond_capacity ? "yes" : "no");  // as compile --fleet's; a found mix: no
  o.add("meets", c.served_meets ? "yes" : "no");
  o.add("counts_chosen_on", "compiled");
  JsonValue kinds = JsonValue::object();  // filled before adding: add may move
  for (std::size_t k = 0; k < c.kinds.size(); ++k) {
    const auto& sk = c.by_kind[k];
    if (sk.grid_qps.empty()) continue;
    JsonValue jk = JsonValue::object(), grid = JsonValue::array();
    for (double l : sk.grid_qps) grid.push(l);
    jk.add("workers", static_cast<double>(c.cheapest.workers[k]));
    jk.add("load_qps", sk.load_qps);
    jk.add("accuracy", sk.served.accuracy);
    jk.add("violation_rate", sk.served.violation_rate);
    jk.add("grid_qps", grid);
    kinds.add(c.kinds[k], jk);
  }
  o.add("kinds", kinds);
  return o;
}

}  // namespace

std::string fleet_plan_table(const compiler::FleetPlan& plan, double fleet_load_qps) {
  std::string out = format("fleet load %g QPS\n", fleet_load_qps);
  double mixed = 0;
  bool all_found = true;
  std::map<std::string, double> uniform;  // per kind: the fleet's cost when every class uses it alone
  std::map<std::string, bool> uniform_found;
  for (const auto& c : plan.classes) {
    out += format("\nclass %s: %g QPS\n  %-12s", c.name.c_str(), c.load_qps, "plan");
    for (const auto& k : c.kinds) out += format("  %6s", k.c_str());
    for (const auto& k : c.kinds) out += format("  %6s", ("w:" + k).c_str());
    out += "     cost/s  accuracy  violation\n";
    out += mix_row("cheapest", c.cheapest);
    if (c.has_served) {
      std::string row = format("  %-12s", "served");
      for (std::size_t i = 0; i < 2 * c.kinds.size(); ++i) row += format("  %6s", "");
      out += row + format("  %9s  %8.4f  %9.4f%s\n", "", c.served.accuracy, c.served.violation_rate,
                          c.served_meets ? "" : " x");
    }
    for (std::size_t k = 0; k < c.kinds.size(); ++k) {
      out += mix_row(c.kinds[k] + " alone", c.alone[k]);
      uniform[c.kinds[k]] += c.alone[k].cost_per_s;
      uniform_found.emplace(c.kinds[k], &c == &plan.classes.front());  // absent from an earlier class: not uniform
      uniform_found[c.kinds[k]] = uniform_found[c.kinds[k]] && c.alone[k].found;
    }
    // A uniform fleet of a kind: only when every class can use that kind.
    for (auto& [kind, found] : uniform_found)
      if (std::find(c.kinds.begin(), c.kinds.end(), kind) == c.kinds.end()) found = false;
    mixed += c.cheapest.cost_per_s;
    all_found = all_found && c.cheapest.found;
  }
  out += all_found ? format("\ntotal cost/s: cheapest mix %.2f", mixed) : std::string("\ntotal cost/s: cheapest mix -");
  for (const auto& [kind, cost] : uniform)
    if (uniform_found[kind]) out += format("; %s alone %.2f", kind.c_str(), cost);
  out += "\n";
  if (std::any_of(plan.classes.begin(), plan.classes.end(), [](const auto& c) { return c.has_served; }))
    out +=
        "(served: the cheapest mix's accuracy/violation through each kind's 500 ms load estimate, --expect-lag on;\n"
        " x: misses the target; the counts were chosen on the compiled figures)\n";
  return out;
}

std::string fleet_plan_json(const compiler::FleetPlan& plan, double fleet_load_qps) {
  JsonValue root = JsonValue::object();
  root.add("fleet_load_qps", fleet_load_qps);
  JsonValue& classes = root.add("classes", JsonValue::array());
  for (const auto& c : plan.classes) {
    JsonValue& jc = classes.push(JsonValue::object());
    jc.add("name", c.name);
    jc.add("load_qps", c.load_qps);
    jc.add("cheapest", mix_json(c, c.cheapest));
    JsonValue& alone = jc.add("alone", JsonValue::object());
    for (std::size_t k = 0; k < c.kinds.size(); ++k) alone.add(c.kinds[k], mix_json(c, c.alone[k]));
    if (c.has_served) jc.add("served", served_json(c));
  }
  root.add("policies_compiled", static_cast<double>(plan.solves));
  return root.text() + "\n";
}

std::string planned_fleet_json(const FleetDescription& fleet, const compiler::FleetPlan& plan) {
  JsonValue root = JsonValue::object();
  JsonValue kinds = JsonValue::array();
  for (const auto& k : fleet.kinds) {
    JsonValue& jk = kinds.push(JsonValue::object());
    jk.add("name", k.name);
    jk.add("profiles", std::filesystem::absolute(k.profiles).string());
    if (!k.accuracy_percent.empty()) jk.add("accuracy_percent", std::filesystem::absolute(k.accuracy_percent).string());
    jk.add("price_per_s", k.price_per_s);
  }
  root.add("kinds", kinds);
  JsonValue classes = JsonValue::array();
  for (std::size_t i = 0; i < fleet.classes.size(); ++i) {
    const auto& c = fleet.classes[i];
    const auto& p = plan.classes[i];
    if (!p.cheapest.found)
      throw std::runtime_error("--fleet-out: class '" + c.name + "': no mix meets its target; nothing written");
    JsonValue& jc = classes.push(JsonValue::object());
    jc.add("name", c.name);
    jc.add("slo_ms", c.slo_ms);
    jc.add("share", c.share);
    jc.add("max_violation", c.max_violation);
    if (c.min_accuracy > 0) jc.add("min_accuracy", c.min_accuracy);
    JsonValue workers = JsonValue::object();
    for (std::size_t k = 0; k < p.kinds.size(); ++k)
      if (p.cheapest.workers[k] > 0) workers.add(p.kinds[k], static_cast<double>(p.cheapest.workers[k]));
    jc.add("workers", workers);
  }
  root.add("classes", classes);
  return root.text() + "\n";
}

std::string fleet_policy_summary(const std::string& path, const schema::FleetPolicy& fleet) {
  std::string out =
      format("fleet policy %s (format %u, checksum %016llx): %d classes\n", path.c_str(), fleet.format_version(),
             static_cast<unsigned long long>(fleet.checksum()), fleet.classes_size());
  for (const auto& c : fleet.classes()) {
    out += "\n" + class_header(c);
    for (const auto& k : c.kinds()) {
      const auto& lib = k.library();
      std::string counts;
      int policies = 0;
      for (const auto& set : lib.sets()) {
        counts += format("%s%u", counts.empty() ? "" : ",", set.workers());
        policies += set.policies_size();
      }
      std::string models;
      for (const auto& m : lib.sets(0).models()) models += (models.empty() ? "" : ", ") + m.name();
      out +=
          format("  kind %s: %u workers, price %g/s, library: task %s, sets for %s workers, %d policies; models %s\n",
                 k.kind().c_str(), k.workers(), k.price_per_s(), lib.sets(0).task().c_str(), counts.c_str(), policies,
                 models.c_str());
    }
    std::string head = "  load QPS";
    for (const auto& k : c.kinds()) head += format("  %8s", ("w:" + k.kind()).c_str());
    out += head + "  exp. accuracy  exp. violation\n";
    for (const auto& s : c.splits()) {
      std::string row = format("  %8.1f", s.load_qps());
      for (double w : s.weights()) row += format("  %8.2f", w);
      out += row + format("  %13.4f  %14.4f\n", s.accuracy(), s.violation_rate());
    }
  }
  return out;
}

}  // namespace lull::cli
