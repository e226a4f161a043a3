// Model variants on the command line: the flags and the reading of the sets
// (why one place for both commands: variant_sets.h).
#include "cli/variant_sets.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "cli/option_ranges.h"
#include "runtime/manager/model_variants.h"
#include "runtime/core/policy_loader.h"
#include "schema/variant_manifest.h"

namespace lull::cli {

namespace po = boost::program_options;

namespace {

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// A variant set to load: its file, the load it serves from, and (from a
// manifest) the models the manifest says it uses, with the field that says so.
struct VariantSource {
  std::string path;
  double from_qps = 0;
  std::vector<std::string> models;  // empty: not stated (FILE@QPS)
  std::string what;                 // "variants[i]" in a manifest
};

bool is_manifest(const std::string& sets) {
  return sets.find('@') == std::string::npos && sets.size() > 5 && sets.compare(sets.size() - 5, 5, ".json") == 0;
}

// The same models, in any order (a set's order is its model ids; a
// manifest's is how lull plan variants listed them).
bool same_models(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// The sets above the full one: from SET.pb@QPS,... or from a manifest
// (lull plan variants), whose first variant must be the full set itself
// (--policies, `full_path`: the models the servers hold at start).
std::vector<VariantSource> variant_sources(const std::string& sets, const std::vector<std::string>& full_models,
                                           const std::string& full_path) {
  std::vector<VariantSource> out;
  if (is_manifest(sets)) {
    std::vector<VariantManifestEntry> entries;
    try {
      entries = read_variant_manifest(sets);
    } catch (const VariantManifestError& e) {
      throw UsageError(std::string("--variant-sets: ") + e.what());
    }
    for (std::size_t i = 0; i < entries.size(); ++i)  // every file, the first (--policies' twin) too
      if (!std::filesystem::is_regular_file(entries[i].path))
        throw UsageError("--variant-sets: " + sets + ": variants[" + std::to_string(i) + "].file: " + entries[i].path +
                         ": no such file");
    const auto& first = entries.front();
    if (!same_models(first.models, full_models)) {
      std::error_code ec;
      const bool is_policies = std::filesystem::equivalent(first.path, full_path, ec);
      throw UsageError(
          "--variant-sets: " + sets + ": variants[0].models: " + joined_names(first.models) +
          " are not --policies' models (" + joined_names(full_models) + ")" +
          (is_policies ? "; the manifest does not describe " + full_path + ": write both again with lull plan variants"
                       : "; serve the manifest's " + first.file + " as --policies"));
    }
    for (std::size_t i = 1; i < entries.size(); ++i)
      out.push_back({entries[i].path, entries[i].from_qps, entries[i].models, "variants[" + std::to_string(i) + "]"});
    return out;
  }
  double last = 0;
  for (const auto& item : split_commas(sets)) {
    const auto at = item.rfind('@');
    if (at == std::string::npos || at == 0)
      throw UsageError("--variant-sets: '" + item + "' is not SET.pb@QPS (or give a manifest, VARIANTS.json)");
    const double from = parse_number_list(item.substr(at + 1), "--variant-sets").at(0);
    if (!(from > last)) throw UsageError("--variant-sets: '" + item + "': loads must be positive and ascending");
    last = from;
    out.push_back({item.substr(0, at), from, {}, item});
  }
  if (out.empty()) throw UsageError("--variant-sets: no set given");
  return out;
}

}  // namespace

void add_variant_choice_options(po::options_description& desc, VariantChoiceFlags& f) {
  // clang-format off
  desc.add_options()
      ("variant-sets", po::value(&f.sets),
       "model variants: VARIANTS.json (the manifest lull plan variants writes; its first variant is --policies), "
       "or SET.pb@QPS,... each a policy set compiled (lull compile --models) for a subset of "
       "--policies' models that starts with its model 0; it serves from QPS up, and the models it does not use "
       "are unloaded from the servers (management API), make-before-break. Below the lowest QPS: --policies. "
       "With a library as --policies (and with --autoscale) each variant is a library over the same worker counts "
       "(lull plan variants --workers A:B:S)")
      ("variant-hysteresis", po::value(&f.hysteresis)->default_value(0.1),
       "back to a lower variant only below its boundary by this fraction")
      ("variant-dwell-s", po::value(&f.dwell_s)->default_value(5), "at least this long between variant switches")
      ("variant-interval-ms", po::value(&f.interval_ms)->default_value(200), "how often the load is checked")
      ("variant-load", po::value(&f.load)->default_value("current:5"),
       "the load that picks the variant: a forecaster over the arrival rate (current:S the mean of the last S s, "
       "window_max:S, ewma:S, trend:S)");
  // clang-format on
}

std::unique_ptr<manager::LoadForecaster> check_variant_choice(const VariantChoiceFlags& flags) {
  check_range("--variant-hysteresis", flags.hysteresis, 0, 0.9);
  check_range("--variant-dwell-s", flags.dwell_s, 0, 86400);
  check_range("--variant-interval-ms", flags.interval_ms, 1, 60000);
  try {
    return manager::make_forecaster(flags.load);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--variant-load: ") + e.what());
  }
}

std::vector<manager::ModelVariant> load_variant_sets(const std::string& sets,
                                                     const std::vector<core::PolicyTable>& full,
                                                     const std::string& full_name) {
  std::vector<manager::ModelVariant> variants;
  variants.push_back({full_name, 0, full, manager::model_names(full.at(0))});
  for (const auto& v : variant_sources(sets, variants.front().models, full_name)) {
    // A set or a library (lull plan variants --workers A:B:S), one table per worker count.
    const std::vector<core::PolicyTable> subset = core::load_policy_library(v.path, {});
    const std::vector<std::string> models = v.models.empty() ? manager::model_names(subset.at(0)) : v.models;
    for (const auto& t : subset)  // the same models at every worker count
      if (!same_models(manager::model_names(t), models))
        throw UsageError("--variant-sets " + sets + ": " + v.what + ".models: " + v.path +
                         " holds policies for other models (" + joined_names(manager::model_names(t)) + ")");
    try {
      variants.push_back({v.path, v.from_qps, manager::widen_policy_library(subset, full, "--variant-sets " + v.path),
                          manager::model_names(subset.at(0))});
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (variants.size() < 2) throw UsageError("--variant-sets: no set given");
  return variants;
}

}  // namespace lull::cli
