// The variants manifest and table (why: plan_variants_output.h).
#include "cli/plan_variants_output.h"

#include <cstdio>

#include "cli/json_object.h"
#include "schema/variant_manifest.h"

namespace lull::cli {
namespace {

std::string names_of(const std::vector<int>& models, const VariantsContext& ctx) {
  std::string out;
  for (int i : models) out += (out.empty() ? "" : ",") + ctx.model_names.at(static_cast<std::size_t>(i));
  return out;
}

std::size_t variant_of_load(const compiler::VariantPlan& plan, double load_qps) {
  std::size_t v = 0;
  for (std::size_t i = 0; i < plan.variants.size(); ++i)
    if (load_qps >= plan.variants[i].from_qps) v = i;
  return v;
}

}  // namespace

std::string variant_file_name(std::size_t i) { return "variant-" + std::to_string(i) + ".pb"; }

std::string variants_manifest_json(const compiler::VariantPlanRequest& req, const compiler::VariantPlan& plan,
                                   const VariantsContext& ctx) {
  JsonValue root = JsonValue::object();
  root.add("format", kVariantManifestFormat);
  root.add("task", ctx.task);
  root.add("slo_ms", ctx.slo_ms);
  root.add("workers", req.spec.mdp.workers);  // the count the sets were picked on
  // What each file holds: one policy set, or a library over these counts.
  root.add("policies", ctx.worker_counts.size() > 1 ? "library" : "set");
  JsonValue& counts = root.add("worker_counts", JsonValue::array());
  for (int k : ctx.worker_counts) counts.push(static_cast<double>(k));
  root.add("max_violation", req.target.max_violation);
  root.add("min_accuracy", req.target.min_accuracy);
  root.add("worker_memory_mb", req.worker_memory_mb);
  root.add("candidate_sets", plan.candidates);
  JsonValue& variants = root.add("variants", JsonValue::array());
  for (std::size_t i = 0; i < plan.variants.size(); ++i) {
    const auto& v = plan.variants[i];
    JsonValue& o = variants.push(JsonValue::object());
    o.add("file", ctx.files.at(i));
    o.add("from_qps", v.from_qps);
    JsonValue& models = o.add("models", JsonValue::array());
    for (int m : v.models) models.push(ctx.model_names.at(static_cast<std::size_t>(m)));
    o.add("memory_mb", v.memory_mb);
  }
  JsonValue& loads = root.add("loads", JsonValue::array());
  for (const auto& l : plan.loads) {
    JsonValue& o = loads.push(JsonValue::object());
    o.add("load_qps", l.load_qps);
    o.add("variant", static_cast<double>(variant_of_load(plan, l.load_qps)));
    o.add("expected_accuracy", l.expected.accuracy);
    o.add("expected_violation_rate", l.expected.violation_rate);
    o.add("meets_target", l.meets_target ? "yes" : "no");
  }
  root.add("policies_compiled", static_cast<double>(plan.solves));
  return root.text() + "\n";
}

std::string variants_table(const compiler::VariantPlanRequest& req, const compiler::VariantPlan& plan,
                           const VariantsContext& ctx) {
  char line[512];
  std::string out;
  std::snprintf(
      line, sizeof line,
      "lull plan variants: task %s, SLO %g ms, %d workers, expected violation <= %g%s; %d candidate sets\n\n",
      ctx.task.c_str(), ctx.slo_ms, req.spec.mdp.workers, req.target.max_violation,
      req.worker_memory_mb > 0
          ? (", memory " + std::to_string(static_cast<long long>(req.worker_memory_mb)) + " MiB per worker").c_str()
          : "",
      plan.candidates);
  out += line;
  if (ctx.worker_counts.size() > 1) {
    std::string counts;
    for (int k : ctx.worker_counts) counts += (counts.empty() ? "" : ",") + std::to_string(k);
    out += "  picked on " + std::to_string(req.spec.mdp.workers) + " workers; each file a policy library for " +
           counts + " workers\n\n";
  }
  out += "  variant  from QPS  memory MiB  file  models\n";
  for (std::size_t i = 0; i < plan.variants.size(); ++i) {
    const auto& v = plan.variants[i];
    std::snprintf(line, sizeof line, "  %7zu  %8g  %10g  %s  %s\n", i, v.from_qps, v.memory_mb, ctx.files.at(i).c_str(),
                  names_of(v.models, ctx).c_str());
    out += line;
  }
  out += "\n  load QPS  variant  exp. accuracy  exp. violation  meets\n";
  for (const auto& l : plan.loads) {
    std::snprintf(line, sizeof line, "  %8g  %7zu  %13.4f  %14.4f  %s\n", l.load_qps, variant_of_load(plan, l.load_qps),
                  l.expected.accuracy, l.expected.violation_rate, l.meets_target ? "yes" : "no");
    out += line;
  }
  return out;
}

}  // namespace lull::cli
