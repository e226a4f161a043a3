#include "cli/compile_report.h"

#include "cli/json_object.h"

namespace lull::cli {

std::string compile_report_json(const compiler::SweepResult& result, const std::string& device,
                                const CompileSeconds& seconds) {
  JsonValue root = JsonValue::object();
  root.add("task", result.set.task());
  root.add("slo_ms", result.set.slo_ms());
  root.add("workers", result.set.workers());
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
  for (const auto& m : result.set.models()) models.push(m.name());
  JsonValue& list = root.add("policies", JsonValue::array());
  for (const auto& r : result.reports) {
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
  return root.text() + "\n";
}

}  // namespace lull::cli
