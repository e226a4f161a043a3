#include "cli/plan_output.h"

#include <algorithm>
#include <cstdio>

#include "cli/json_object.h"
#include "schema/arrival_process.h"

namespace lull::cli {
namespace {

void add_expectation(JsonValue& obj, const compiler::Expectation& e) {
  obj.add("expected_accuracy", e.accuracy);
  obj.add("expected_violation_rate", e.violation_rate);
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

// Workers a row needs beyond the Poisson row (the first), or 0 when either is out of reach.
int extra_workers(const compiler::PlanResult& r, const compiler::BurstinessRow& row) {
  const int poisson = r.burstiness.front().workers;
  return row.workers > 0 && poisson > 0 ? row.workers - poisson : 0;
}

void shards_json(JsonValue& root, const compiler::PlanResult& r, bool trace) {
  const compiler::ShardPlan& p = r.shards;
  JsonValue& o = root.add("shards", JsonValue::object());
  o.add("qps_limit", p.qps_limit);
  o.add("load_qps", p.load_qps);
  o.add("shards", p.shards);
  o.add("workers_per_shard", p.workers_per_shard);
  o.add("workers", p.workers);
  o.add("worker_seconds", p.worker_seconds);
  if (trace) {
    JsonValue& by_window = o.add("workers_per_shard_by_window", JsonValue::array());
    for (int k : p.workers_per_shard_by_window) by_window.push(k);
    return;
  }
  add_expectation(o, p.expected);
  o.add("compile_s", p.expected.compile_s);
}

// When one process is not enough: G shards of K (docs/operators-guide.md "Shards").
std::string shards_table(const compiler::PlanRequest& req, const compiler::PlanResult& r) {
  const compiler::ShardPlan& p = r.shards;
  const bool trace = !req.trace_path.empty();
  std::string out = fmt("\nshards (one lull process carries at most %g QPS, --shard-qps-limit):\n", p.qps_limit);
  if (p.shards == 1) return out + fmt("  %g QPS needs no shards: one process\n", p.load_qps);
  out += fmt(trace ? "  %g QPS in the busiest window: %.0f shards" : "  %g QPS: %.0f shards", p.load_qps, p.shards);
  if (!trace) {
    out += fmt(" of %.0f workers = %.0f workers (%.0f worker-seconds per second)\n", p.workers_per_shard, p.workers,
               p.worker_seconds, 0);
    out += fmt("  expected accuracy %.4f, expected violation %.4f; each shard serves the policies for %.0f workers\n",
               p.expected.accuracy, p.expected.violation_rate, p.workers);
    out += fmt("  compile cost: one policy for %.0f workers took %.2f s (for %.0f, unsharded: %.2f s)\n", p.workers,
               p.expected.compile_s, r.choice.workers, r.choice.expected.compile_s);
    return out;
  }
  const auto [lo, hi] = std::minmax_element(p.workers_per_shard_by_window.begin(), p.workers_per_shard_by_window.end());
  out += fmt(", %.0f to %.0f workers each by window; worker-seconds %.0f (unsharded %.0f)\n", *lo, *hi,
             p.worker_seconds, r.worker_seconds);
  return out;
}

}  // namespace

std::string plan_json(const compiler::PlanRequest& req, const compiler::PlanResult& r, const PlanContext& ctx) {
  JsonValue root = JsonValue::object();
  root.add("task", ctx.task);
  root.add("slo_ms", ctx.slo_ms);
  root.add("max_violation", req.target.max_violation);
  root.add("min_accuracy", req.target.min_accuracy);
  if (req.trace_path.empty()) {
    root.add("load_qps", req.load_qps);
    root.add("workers", r.choice.workers);
  }
  JsonValue& models = root.add("models", JsonValue::array());
  for (const auto& m : r.models) models.push(m);
  if (req.worker_memory_mb > 0) {
    root.add("worker_memory_mb", req.worker_memory_mb);
    root.add("models_memory_mb", r.models_memory_mb);
    root.add("model_subsets_tried", r.subsets_tried);
  }
  if (req.trace_path.empty()) {
    add_expectation(root, r.choice.expected);
    if (r.has_fewer) {
      JsonValue& fewer = root.add("one_worker_fewer", JsonValue::object());
      fewer.add("workers", r.choice.workers - 1);
      add_expectation(fewer, r.fewer);
      fewer.add("beyond_capacity", r.fewer.beyond_capacity ? "yes" : "no");
    }
  } else {
    root.add("trace", req.trace_path);
    root.add("window_s", req.window_s);
    root.add("lead_s", req.lead_s);
    JsonValue& schedule = root.add("schedule", JsonValue::array());
    for (std::size_t i = 0; i < r.schedule.size(); ++i) {
      JsonValue& w = schedule.push(JsonValue::object());
      w.add("start_s", r.windows[i].start_s);
      w.add("load_qps", r.windows[i].load_qps);
      w.add("workers", r.schedule[i].workers);
      add_expectation(w, r.schedule[i].expected);
    }
    root.add("worker_seconds", r.worker_seconds);
  }
  shards_json(root, r, !req.trace_path.empty());
  JsonValue& cap = root.add("capacity", JsonValue::array());
  for (const auto& row : r.capacity) {
    JsonValue& c = cap.push(JsonValue::object());
    c.add("workers", row.workers);
    c.add("max_load_qps", row.max_load_qps);
    add_expectation(c, row.expected);
  }
  JsonValue& curve = root.add("accuracy_by_workers", JsonValue::object());
  curve.add("load_qps", r.curve_load_qps);
  JsonValue& points = curve.add("points", JsonValue::array());
  for (const auto& c : r.curve) {
    JsonValue& pt = points.push(JsonValue::object());
    pt.add("workers", c.workers);
    add_expectation(pt, c.expected);
    pt.add("meets_target", compiler::meets(c.expected, req.target) ? "yes" : "no");
  }
  if (!r.burstiness.empty()) {
    JsonValue& b = root.add("burstiness", JsonValue::object());
    b.add("load_qps", r.curve_load_qps);
    JsonValue& rows = b.add("rows", JsonValue::array());
    for (const auto& row : r.burstiness) {
      JsonValue& o = rows.push(JsonValue::object());
      o.add("arrivals", arrival_process_text(row.arrivals));
      o.add("workers", row.workers);  // 0: no count up to --max-workers meets the target
      if (row.workers > 0) {
        o.add("more_than_poisson", extra_workers(r, row));
        add_expectation(o, row.expected);
      }
    }
  }
  root.add("phase_cap", req.spec.mdp.phase_cap);
  root.add("max_workers", req.max_workers);
  root.add("policies_compiled", static_cast<double>(r.solves));
  root.add("seconds", ctx.seconds);
  return root.text() + "\n";
}

std::string plan_table(const compiler::PlanRequest& req, const compiler::PlanResult& r, const PlanContext& ctx) {
  std::string out;
  out += "lull plan: task " + ctx.task + ", SLO " + fmt("%g", ctx.slo_ms) +
         " ms, expected violation <= " + fmt("%g", req.target.max_violation) +
         (req.target.min_accuracy > 0 ? ", expected accuracy >= " + fmt("%g", req.target.min_accuracy) : "") + "\n";
  std::string models;
  for (const auto& m : r.models) models += (models.empty() ? "" : ", ") + m;
  out += "models on every worker: " + models;
  if (req.worker_memory_mb > 0)
    out += fmt(" (%.0f of %.0f MiB; best of %.0f model subsets that fit)", r.models_memory_mb, req.worker_memory_mb,
               r.subsets_tried);
  out += "\n\n";
  if (req.trace_path.empty()) {
    out += fmt("at %g QPS: %.0f workers, expected accuracy %.4f, expected violation %.4f\n", req.load_qps,
               r.choice.workers, r.choice.expected.accuracy, r.choice.expected.violation_rate);
    if (r.has_fewer)
      out += r.fewer.beyond_capacity
                 ? fmt("  (%.0f workers: the load is beyond the fastest model's capacity)\n", r.choice.workers - 1)
                 : fmt("  (%.0f workers: expected violation %.4f, accuracy %.4f)\n", r.choice.workers - 1,
                       r.fewer.violation_rate, r.fewer.accuracy);
  } else {
    out += "   start s   load QPS  workers  exp. accuracy  exp. violation\n";
    for (std::size_t i = 0; i < r.schedule.size(); ++i)
      out += fmt("  %8g  %9.1f  %7.0f", r.windows[i].start_s, r.windows[i].load_qps, r.schedule[i].workers) +
             fmt("  %13.4f  %14.4f\n", r.schedule[i].expected.accuracy, r.schedule[i].expected.violation_rate);
    out += fmt("worker-seconds: %.0f over %g s (window %g s, lead %g s)\n", r.worker_seconds,
               r.windows.back().end_s - r.windows.front().start_s, req.window_s, req.lead_s);
  }
  out += shards_table(req, r);
  out += "\ncapacity (highest load meeting the target):\n  workers  max load QPS  exp. accuracy  exp. violation\n";
  for (const auto& row : r.capacity)
    out += fmt("  %7.0f  %12.1f  %13.4f  %14.4f\n", row.workers, row.max_load_qps, row.expected.accuracy,
               row.expected.violation_rate);
  if (!r.burstiness.empty()) {
    out +=
        fmt("\nthe same target at %g QPS under bursty arrivals (gamma:CV2, docs/user-guide.md):\n", r.curve_load_qps) +
        "  arrivals   workers  vs poisson  exp. accuracy  exp. violation\n";
    for (const auto& row : r.burstiness) {
      char name[32];
      std::snprintf(name, sizeof name, "  %-9s", arrival_process_text(row.arrivals).c_str());
      out += name;
      if (row.workers == 0) {
        out += fmt("  none up to --max-workers %.0f\n", req.max_workers);
        continue;
      }
      out += fmt("  %7.0f", row.workers) +
             (&row == &r.burstiness.front() ? std::string(12, ' ') : fmt("  %+10.0f", extra_workers(r, row)));
      out += fmt("  %13.4f  %14.4f\n", row.expected.accuracy, row.expected.violation_rate);
    }
  }
  int largest = std::max(r.choice.workers, r.shards.workers);
  for (const auto& row : r.capacity) largest = std::max(largest, row.workers);
  for (const auto& c : r.schedule) largest = std::max(largest, c.workers);
  if (req.spec.mdp.phase_cap > 0 && largest > req.spec.mdp.phase_cap)
    out +=
        fmt("\nworker counts above %.0f are modelled with %.0f phases at their load per worker "
            "(--phase-cap; docs/user-guide.md, large fleets); compile their policies with --phase-cap %.0f\n",
            req.spec.mdp.phase_cap, req.spec.mdp.phase_cap, req.spec.mdp.phase_cap);
  out += fmt("\n%.0f policies compiled in %.2f s\n", static_cast<double>(r.solves), ctx.seconds);
  return out;
}

}  // namespace lull::cli
