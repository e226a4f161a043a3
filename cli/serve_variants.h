#pragma once
// `lull serve --variant-sets VARIANTS.json` (the manifest `lull plan variants`
// writes) or `SMALL.pb@QPS,...`: model variants while serving,
// on fixed servers or under --autoscale (then each variant is a policy
// library over the same worker counts as --policies, the switcher asks the
// autoscaler for the workers up, and the autoscaler's capacity table follows
// the variant in use: docs/operators-guide.md, "Variants and autoscaling").
// The servers start with the full set (--policies; a manifest's first
// variant) loaded; above each variant's load its set's policies (compiled by
// the plan, or with `lull compile --models`) serve, and the models only the full set uses are unloaded
// through the management API, make-before-break (runtime/manager/
// variant_switcher.h); the Server runs the switch as a controller of its
// ControlLoop (runtime/manager/variant_controller.h, the rule in
// variant_choice.h). This file turns the flags into its VariantSpec.
#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "cli/variant_sets.h"
#include "runtime/core/policy_table.h"
#include "runtime/server/serve_spec.h"

namespace lull::cli {

// The choice of variant (shared with lull simulate: variant_sets.h), and how
// a server loads models and waits for the batches on the ones that go.
struct ServeVariantsFlags : VariantChoiceFlags {
  double drain_timeout_s = 30;
  std::string archive = "{model}.mar";
};

void add_serve_variants_options(boost::program_options::options_description& desc, ServeVariantsFlags& flags);

// Checks the flags (UsageError naming the flag), reads the variant sets and
// checks them against the full set `full` (one table per worker count:
// --policies, a set or a library; each variant's file must cover the same
// counts; the loader's error names the file), and turns them into the
// server's variant spec.
server::VariantSpec variant_spec(const ServeVariantsFlags& flags, const std::vector<core::PolicyTable>& full,
                                 const std::string& full_name);

}  // namespace lull::cli
