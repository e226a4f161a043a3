#pragma once
// Model variants on the command line, for `lull serve --variant-sets` and
// `lull simulate --autoscale --variant-sets` alike: the flags that say which
// variant serves which load (the sets, hysteresis, dwell, how the load is
// estimated) and the reading of the sets (a manifest from `lull plan
// variants`, or SET.pb@QPS,...), each checked against the full set and
// widened over its models. One reader and one set of flags, so that the
// simulator picks variants exactly as a server would.
#include <boost/program_options.hpp>

#include <memory>
#include <string>
#include <vector>

#include "runtime/manager/load_forecast.h"
#include "runtime/manager/variant_switcher.h"
#include "runtime/core/policy_table.h"

namespace lull::cli {

struct VariantChoiceFlags {
  std::string sets;  // VARIANTS.json or FILE@QPS,...
  double hysteresis = 0.1, dwell_s = 5, interval_ms = 200;
  std::string load = "current:5";  // the forecaster (load_forecast.h) whose value picks the variant
};

// --variant-sets, --variant-hysteresis, --variant-dwell-s,
// --variant-interval-ms, --variant-load.
void add_variant_choice_options(boost::program_options::options_description& desc, VariantChoiceFlags& flags);
// Checks the ranges (UsageError naming the flag) and returns the load
// forecaster --variant-load names.
std::unique_ptr<manager::LoadForecaster> check_variant_choice(const VariantChoiceFlags& flags);

// The variants: [0] the full set (`full`: one table per worker count, named
// `full_name`), then each set of `sets` from its load up, widened over the
// full set's models. UsageError naming --variant-sets and the file or
// manifest field when a set does not fit the full one.
std::vector<manager::ModelVariant> load_variant_sets(const std::string& sets,
                                                     const std::vector<core::PolicyTable>& full,
                                                     const std::string& full_name);

}  // namespace lull::cli
