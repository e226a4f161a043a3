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

namespace lull::cli {

namespace po = boost::program_options;

void add_serve_variants_options(po::options_description& desc, ServeVariantsFlags& f) {
  desc.add_options()
      ("variant-sets", po::value(&f.sets),
       "model variants: SET.pb@QPS,... each a policy set compiled (lull compile --models) for a subset of "
       "--policies' models that starts with its model 0; it serves from QPS up, and the models it does not use "
       "are unloaded from the servers (management API), make-before-break. Below the lowest QPS: --policies")
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

ServeVariants::ServeVariants(const ServeVariantsFlags& flags, const runtime::PolicyTable& full,
                             const std::string& full_name, std::vector<std::string> management_urls,
                             const std::string& management_key)
    : flags_(flags), workers_(std::move(management_urls)), control_(client_, [&] {
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
  variants_.push_back({full_name, 0, full, manager::model_names(full)});
  for (const auto& item : split_commas(flags.sets)) {
    const auto at = item.rfind('@');
    if (at == std::string::npos || at == 0)
      throw UsageError("--variant-sets: '" + item + "' is not SET.pb@QPS");
    const std::string file = item.substr(0, at);
    const double from = parse_number_list(item.substr(at + 1), "--variant-sets").at(0);
    if (!(from > variants_.back().from_qps))
      throw UsageError("--variant-sets: '" + item + "': loads must be positive and ascending");
    runtime::PolicyExpectations expect;
    expect.workers = full.workers;
    const runtime::PolicyTable subset = runtime::load_policy_table(file, expect);
    try {
      variants_.push_back({file, from, manager::widen_policy_table(subset, full, "--variant-sets " + file),
                           manager::model_names(subset)});
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
    switcher_->step(forecaster_->forecast(now_us, 0), now_us);
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
