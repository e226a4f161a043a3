#include "cli/compile_report.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

namespace lull::cli {

namespace {
using google::protobuf::Struct;
using google::protobuf::Value;

void put(Struct& s, const std::string& key, double v) { (*s.mutable_fields())[key].set_number_value(v); }
void put(Struct& s, const std::string& key, const std::string& v) { (*s.mutable_fields())[key].set_string_value(v); }
}  // namespace

std::string compile_report_json(const compiler::SweepResult& result, const std::string& device,
                                const CompileSeconds& seconds) {
  Struct root;
  put(root, "task", result.set.task());
  put(root, "slo_ms", result.set.slo_ms());
  put(root, "workers", result.set.workers());
  put(root, "device", device);
  put(root, "total_seconds", seconds.total);
  Struct& phases = *(*root.mutable_fields())["phase_seconds"].mutable_struct_value();
  put(phases, "setup", seconds.setup);
  put(phases, "read", seconds.inputs.read);
  put(phases, "validate", seconds.inputs.validate);
  put(phases, "reduce", seconds.inputs.reduce);
  put(phases, "solve", seconds.solve);
  put(phases, "write", seconds.write);
  auto* models = (*root.mutable_fields())["models"].mutable_list_value();
  for (const auto& m : result.set.models()) models->add_values()->set_string_value(m.name());
  auto* list = (*root.mutable_fields())["policies"].mutable_list_value();
  for (const auto& r : result.reports) {
    Value v;
    Struct& p = *v.mutable_struct_value();
    put(p, "load_qps", r.load_qps);
    put(p, "expected_accuracy", r.expected_accuracy);
    put(p, "expected_violation_rate", r.expected_violation_rate);
    put(p, "states", r.states);
    put(p, "actions", static_cast<double>(r.actions));
    put(p, "beyond_capacity", r.beyond_capacity ? "yes" : "no");
    put(p, "stationary_steps", r.stationary_steps);
    put(p, "residual", r.residual);
    put(p, "table_bytes", static_cast<double>(r.table_bytes));
    Struct& sec = *(*p.mutable_fields())["seconds"].mutable_struct_value();
    put(sec, "build_transitions", r.seconds.build);
    put(sec, "value_iteration", r.seconds.solve);
    put(sec, "expectations", r.seconds.expect);
    *list->add_values() = v;
  }
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(root, &out, opts);
  return out;
}

}  // namespace lull::cli
