#include "runtime/core/background_policy_provider.h"

#include <chrono>
#include <optional>
#include <cstdio>
#include <stdexcept>

namespace lull::core {
namespace {
bool same(const PolicyRequest& a, const PolicyRequest& b) {
  return a.workers == b.workers && a.load_qps == b.load_qps && a.arrivals == b.arrivals;
}
}  // namespace

BackgroundPolicyProvider::BackgroundPolicyProvider(PolicyCompiler& compiler,
                                                   std::function<void(const std::string&)> log)
    : compiler_(compiler), log_(std::move(log)), worker_([this](const PolicyRequest& r) { compile(r); }) {}

BackgroundPolicyProvider::~BackgroundPolicyProvider() = default;  // worker_ first: finishes, drops the waiting one

void BackgroundPolicyProvider::connect(PolicyInbox& inbox) {
  std::lock_guard<std::mutex> lock(mu_);
  inbox_ = &inbox;
}

void BackgroundPolicyProvider::disconnect() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_ = nullptr;
  }
  worker_.drop_waiting();
}

void BackgroundPolicyProvider::request(const PolicyRequest& r) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!inbox_) return;  // not connected (yet, or any more)
  }
  worker_.post(r, [&r](const PolicyRequest& running) { return same(running, r); });
}

OnlineCompileStats BackgroundPolicyProvider::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void BackgroundPolicyProvider::wait_idle() { worker_.wait_idle(); }

void BackgroundPolicyProvider::abandon() {
  disconnect();
  compiler_.cancel();
}

void BackgroundPolicyProvider::compile(const PolicyRequest& r) {
  const auto t0 = std::chrono::steady_clock::now();
  if (log_) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "online compilation: started, policy for %d workers at %g QPS", r.workers,
                  r.load_qps);
    log_(buf);
  }
  std::string line;
  bool ok = false;
  double seconds = 0;
  std::optional<PolicyTable> table;
  try {
    table = compiler_.compile(r);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ok = true;
    char buf[200];
    std::snprintf(buf, sizeof buf, "online compilation: policy for %d workers at %g QPS%s%s in %.3f s", r.workers,
                  r.load_qps, r.arrivals.is_poisson() ? "" : ", arrivals ",
                  r.arrivals.is_poisson() ? "" : arrival_process_text(r.arrivals).c_str(), seconds);
    line = buf;
  } catch (const std::exception& e) {
    line = std::string("online compilation failed: ") + e.what();
  }
  if (log_) log_(line);
  std::lock_guard<std::mutex> lock(mu_);
  if (ok && inbox_) inbox_->post(std::move(*table));
  if (ok) {
    ++stats_.compilations;
    stats_.seconds_sum += seconds;
    stats_.last_seconds = seconds;
  } else {
    ++stats_.failures;
  }
}

}  // namespace lull::core
