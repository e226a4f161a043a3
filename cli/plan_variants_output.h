#pragma once
// What `lull plan variants` writes: the variants manifest (JSON, the format
// schema/variant_manifest.h reads back: each variant's file, models and the
// load it serves from, plus the pick at every load of the sweep) and the same
// as a readable table for stdout.
#include <string>
#include <vector>

#include "compiler/plan/variant_plan.h"

namespace lull::cli {

struct VariantsContext {
  std::string task;
  double slo_ms = 0;
  std::vector<std::string> model_names;  // the profiles' models, indexed by the plan's model indices
  std::vector<std::string> files;        // each variant's policy set, relative to the manifest's folder
  std::vector<int> worker_counts;        // the counts each file covers (more than one: a library each)
};

// The file name of variant i in the output folder.
std::string variant_file_name(std::size_t i);

std::string variants_manifest_json(const compiler::VariantPlanRequest& request, const compiler::VariantPlan& plan,
                                   const VariantsContext& ctx);
std::string variants_table(const compiler::VariantPlanRequest& request, const compiler::VariantPlan& plan,
                           const VariantsContext& ctx);

}  // namespace lull::cli
