// `lull serve --variant-sets`: flags, the variant sets, the switching thread
// (why: serve_variants.h).
#include "cli/serve_variants.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/option_ranges.h"

namespace lull::cli {

namespace po = boost::program_options;

void add_serve_variants_options(po::options_description& desc, ServeVariantsFlags& f) {
  add_variant_choice_options(desc, f);
  desc.add_options()
      ("variant-drain-timeout-s", po::value(&f.drain_timeout_s)->default_value(30),
       "longest wait for batches in flight on a model before it is unloaded")
      ("model-archive", po::value(&f.archive)->default_value("{model}.mar"),
       "the archive a model is registered from (POST /models?url=...), {model} replaced");
}

ServeVariants::ServeVariants(const ServeVariantsFlags& flags, const std::vector<runtime::PolicyTable>& full,
                             const std::string& full_name, manager::WorkerList workers,
                             const std::string& management_key)
    : flags_(flags), workers_(std::move(workers)) {
  if (flags.model_control) {
    control_ = flags.model_control(client_);
  } else {
    serve::ModelManagementOptions o;
    o.management_key = management_key;
    control_ = std::make_unique<serve::TorchServeModelControl>(client_, o, flags.archive);
  }
  forecaster_ = check_variant_choice(flags);
  check_range("--variant-drain-timeout-s", flags.drain_timeout_s, 0.001, 3600);
  variants_ = load_variant_sets(flags.sets, full, full_name);
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
        variants_, workers_, *control_, *swap_, [](const std::string& line) { std::cerr << line << std::endl; },
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
