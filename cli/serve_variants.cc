// `lull serve --variant-sets`: flags and the variant sets (why: serve_variants.h).
#include "cli/serve_variants.h"

#include "cli/commands.h"
#include "cli/option_ranges.h"

namespace lull::cli {

namespace po = boost::program_options;

void add_serve_variants_options(po::options_description& desc, ServeVariantsFlags& f) {
  add_variant_choice_options(desc, f);
  // clang-format off
  desc.add_options()
      ("variant-drain-timeout-s", po::value(&f.drain_timeout_s)->default_value(30),
       "longest wait for batches in flight on a model before it is unloaded")
      ("model-archive", po::value(&f.archive)->default_value("{model}.mar"),
       "the archive a model is registered from (POST /models?url=...), {model} replaced");
  // clang-format on
}

server::VariantSpec variant_spec(const ServeVariantsFlags& flags, const std::vector<core::PolicyTable>& full,
                                 const std::string& full_name) {
  check_variant_choice(flags);
  check_range("--variant-drain-timeout-s", flags.drain_timeout_s, 0.001, 3600);
  server::VariantSpec spec;
  spec.variants = load_variant_sets(flags.sets, full, full_name);
  spec.switching = manager::VariantSwitchOptions{flags.hysteresis, static_cast<std::int64_t>(flags.dwell_s * 1e6)};
  spec.interval_us = static_cast<std::int64_t>(flags.interval_ms * 1000);
  spec.load = flags.load;
  spec.drain_timeout_ms = static_cast<std::int64_t>(flags.drain_timeout_s * 1000);
  spec.archive = flags.archive;
  return spec;
}

}  // namespace lull::cli
