#include "cli/compile_report.h"

#include "compiler/mdp/arrival_model.h"

#include "cli/json_object.h"

namespace lull::cli {
namespace {

JsonValue header(const compiler::SweepResult& first) {
  JsonValue root = JsonValue::object();
  root.add("task", first.set.task());
  root.add("slo_ms", first.set.slo_ms());
  return root;
}

void add_run(JsonValue& root, const compiler::SweepResult& first, const std::string& device,
             const CompileSeconds& seconds) {
  root.add("device", device);
  root.add("total_seconds", seconds.total);
  JsonValue& phases = root.add("phase_seconds", JsonValue::object());
  phases.add("setup", seconds.setup);
  phases.add("read", seconds.inputs.read);
  phases.add("validate", seconds.inputs.validate);
  phases.add("reduce", seconds.inputs.reduce);
  phases.add("solve", seconds.solve);
  phases.add("write", seconds.write);
  JsonValue& models = root.add("models", JsonValue::array());
  for (const auto& m : first.set.models()) models.push(m.name());
}

// The grid (when adaptive) and the policies of one worker count.
void add_sweep(JsonValue& obj, const compiler::LibrarySweep& s, bool adaptive) {
  if (s.sweep.set.policies_size() > 0) {
    // The process and whether its MDP is exact (docs/solver.md).
    const std::string text = s.sweep.set.policies(0).inputs().arrivals();
    obj.add("arrivals", text);
    const int cap = static_cast<int>(s.sweep.set.policies(0).inputs().phase_cap());
    obj.add("arrival_model",
            compiler::arrival_model(parse_arrival_process(text, "arrivals"), s.workers, 1, cap).description);
    if (cap > 0) obj.add("phase_cap", cap);
  }
  if (adaptive) {
    JsonValue& grid = obj.add("load_grid", JsonValue::object());
    grid.add("kind", "adaptive");
    grid.add("loads", static_cast<double>(s.sweep.reports.size()));
    grid.add("rounds", s.rounds);
  }
  JsonValue& list = obj.add("policies", JsonValue::array());
  for (const auto& r : s.sweep.reports) {
    JsonValue& p = list.push(JsonValue::object());
    p.add("load_qps", r.load_qps);
    p.add("expected_accuracy", r.expected_accuracy);
    p.add("expected_violation_rate", r.expected_violation_rate);
    p.add("states", r.states);
    p.add("actions", static_cast<double>(r.actions));
    p.add("beyond_capacity", r.beyond_capacity ? "yes" : "no");
    p.add("stationary_steps", r.stationary_steps);
    p.add("residual", r.residual);
    p.add("table_bytes", static_cast<double>(r.table_bytes));
    JsonValue& sec = p.add("seconds", JsonValue::object());
    sec.add("build_transitions", r.seconds.build);
    sec.add("value_iteration", r.seconds.solve);
    sec.add("expectations", r.seconds.expect);
  }
}

}  // namespace

std::string compile_report_json(const compiler::LibrarySweep& sweep, bool adaptive, const std::string& device,
                                const CompileSeconds& seconds) {
  JsonValue root = header(sweep.sweep);
  root.add("workers", sweep.sweep.set.workers());
  add_run(root, sweep.sweep, device, seconds);
  add_sweep(root, sweep, adaptive);
  return root.text() + "\n";
}

std::string library_report_json(const std::vector<compiler::LibrarySweep>& sweeps, bool adaptive,
                                const std::string& device, const CompileSeconds& seconds) {
  JsonValue root = header(sweeps.front().sweep);
  JsonValue& counts = root.add("workers", JsonValue::array());
  for (const auto& s : sweeps) counts.push(s.workers);
  add_run(root, sweeps.front().sweep, device, seconds);
  JsonValue& sets = root.add("sets", JsonValue::array());
  for (const auto& s : sweeps) {
    JsonValue& obj = sets.push(JsonValue::object());
    obj.add("workers", s.workers);
    add_sweep(obj, s, adaptive);
  }
  return root.text() + "\n";
}

}  // namespace lull::cli
