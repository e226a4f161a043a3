// `lull serve --variant-sets`: flags, the variant sets, the switching thread
// (why: serve_variants.h).
#include "cli/serve_variants.h"

#include <iostream>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "cli/option_ranges.h"
#include "cli/parse_options.h"
#include "runtime/manager/model_variants.h"
#include "runtime/policy_loader.h"
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

// The sets above the full one: from SET.pb@QPS,... or from a manifest
// (lull plan variants), whose first variant must be the full set itself
// (--policies: the models the servers hold at start).
std::vector<VariantSource> variant_sources(const std::string& sets, const std::vector<std::string>& full_models) {
  std::vector<VariantSource> out;
  if (is_manifest(sets)) {
    std::vector<VariantManifestEntry> entries;
    try {
      entries = read_variant_manifest(sets);
    } catch (const VariantManifestError& e) {
      throw UsageError(std::string("--variant-sets: ") + e.what());
    }
    if (entries.front().models != full_models)
      throw UsageError("--variant-sets: " + sets + ": variants[0].models: " + joined_names(entries.front().models) +
                       " are not --policies' models (" + joined_names(full_models) + "); serve the manifest's " +
                       entries.front().file + " as --policies");
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

void add_serve_variants_options(po::options_description& desc, ServeVariantsFlags& f) {
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
       "window_max:S, ewma:S, trend:S)")
      ("variant-drain-timeout-s", po::value(&f.drain_timeout_s)->default_value(30),
       "longest wait for batches in flight on a model before it is unloaded")
      ("model-archive", po::value(&f.archive)->default_value("{model}.mar"),
       "the archive a model is registered from (POST /models?url=...), {model} replaced");
}

ServeVariants::ServeVariants(const ServeVariantsFlags& flags, const std::vector<runtime::PolicyTable>& full,
                             const std::string& full_name, manager::WorkerList workers,
                             const std::string& management_key)
    : flags_(flags), workers_(std::move(workers)), control_(client_, [&] {
        serve::ModelManagementOptions o;
        o.management_key = management_key;
        return o;
      }(), flags.archive) {
  check_range("--variant-hysteresis", flags.hysteresis, 0, 0.9);
  check_range("--variant-dwell-s", flags.dwell_s, 0, 86400);
  check_range("--variant-interval-ms", flags.interval_ms, 1, 60000);
  check_range("--variant-drain-timeout-s", flags.drain_timeout_s, 0.001, 3600);
  try {
    forecaster_ = manager::make_forecaster(flags.load);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--variant-load: ") + e.what());
  }
  variants_.push_back({full_name, 0, full, manager::model_names(full.at(0))});
  for (const auto& v : variant_sources(flags.sets, variants_.front().models)) {
    // A set or a library (lull plan variants --workers A:B:S), one table per worker count.
    const std::vector<runtime::PolicyTable> subset = runtime::load_policy_library(v.path, {});
    const std::vector<std::string> models = v.models.empty() ? manager::model_names(subset.at(0)) : v.models;
    for (const auto& t : subset)  // the same models at every worker count
      if (manager::model_names(t) != models)
        throw UsageError("--variant-sets " + flags.sets + ": " + v.what + ".models: " + v.path +
                         " holds policies for other models (" + joined_names(manager::model_names(t)) + ")");
    try {
      variants_.push_back({v.path, v.from_qps, manager::widen_policy_library(subset, full, "--variant-sets " + v.path),
                           manager::model_names(subset.at(0))});
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (variants_.size() < 2) throw UsageError("--variant-sets: no set given");
}

ServeVariants::~ServeVariants() { stop(); }

void ServeVariants::configure(serve::ServeOptions& options) {
  auto arrived = options.on_arrival;
  options.on_arrival = [this, arrived](std::int64_t t_us) {
    arrivals_.fetch_add(1, std::memory_order_relaxed);
    if (arrived) arrived(t_us);
  };
  auto before = options.extra_metrics;
  options.extra_metrics = [this, before] {
    std::string out = before ? before() : "";
    std::lock_guard<std::mutex> lock(mu_);
    if (switcher_) out += switcher_->metrics_text();
    return out;
  };
}

void ServeVariants::start(serve::ServeSession& session) {
  swap_ = std::make_unique<manager::SessionPolicySwap>(session, static_cast<std::int64_t>(flags_.drain_timeout_s * 1000));
  {
    std::lock_guard<std::mutex> lock(mu_);
    switcher_ = std::make_unique<manager::VariantSwitcher>(
        variants_, workers_, control_, *swap_, [](const std::string& line) { std::cerr << line << std::endl; },
        manager::VariantSwitchOptions{flags_.hysteresis, static_cast<std::int64_t>(flags_.dwell_s * 1e6)});
  }
  thread_ = std::thread([this] { loop(); });
}

void ServeVariants::loop() {
  std::int64_t last_us = clock_.now_us();
  std::uint64_t last_count = arrivals_.load();
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::microseconds(static_cast<std::int64_t>(flags_.interval_ms * 1000)),
                         [this] { return stopping_; })) {
    lock.unlock();
    const std::int64_t now_us = clock_.now_us();
    const std::uint64_t count = arrivals_.load();
    if (now_us > last_us) forecaster_->observe(now_us, static_cast<double>(count - last_count) * 1e6 / (now_us - last_us));
    last_us = now_us;
    last_count = count;
    if (switcher_->step(forecaster_->forecast(now_us, 0), now_us) && on_switch_) {
      try {
        on_switch_(switcher_->variant(switcher_->current()).tables);
      } catch (const std::exception& e) {  // checked at start; never ends serving
        std::cerr << "lull serve: variant: " << e.what() << std::endl;
      }
    }
    lock.lock();
  }
}

void ServeVariants::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace lull::cli
