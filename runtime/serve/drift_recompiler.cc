// Recompilation on latency drift (why and how: see drift_recompiler.h).
#include "runtime/serve/drift_recompiler.h"

#include <chrono>
#include <cstdio>
#include <exception>

#include "schema/policy_file.h"

namespace lull::serve {

DriftRecompiler::DriftRecompiler(schema::PolicySet served, std::string out_path, Recompile recompile, Write write,
                                 std::function<void(const std::string&)> log)
    : served_(std::move(served)),
      out_path_(std::move(out_path)),
      recompile_(std::move(recompile)),
      write_(std::move(write)),
      log_(std::move(log)) {}

void DriftRecompiler::on_drift(const DriftEvent& event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_ = event.corrected_latency_us;
  }
  wake_loop();
}

std::int64_t DriftRecompiler::next_tick_us() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_ ? 0 : kNever;
}

void DriftRecompiler::tick(std::int64_t) {
  std::vector<std::vector<double>> latency_us;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!waiting_) return;
    latency_us = std::move(*waiting_);
    waiting_.reset();
    running_ = true;
  }
  recompile(latency_us);
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
  ++finished_;
  idle_.notify_all();
}

void DriftRecompiler::connect(std::function<void(const schema::PolicySet&)> target) {
  std::lock_guard<std::mutex> lock(target_mu_);
  target_ = std::move(target);
}

int DriftRecompiler::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return !running_ && !waiting_; });
  return finished_;
}

void DriftRecompiler::recompile(const std::vector<std::vector<double>>& latency_us) {
  std::string line;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const schema::PolicySet set = recompile_(served_, latency_us);
    write_(policy_set_bytes(set));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& last = set.policies(set.policies_size() - 1).expected();
    const auto& was = served_.policies(served_.policies_size() - 1).expected();
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "recompiled from observed latencies in %.2f s: at %g qps expected violation %.4f "
                  "(the served set: %.4f), accuracy %.4f (%.4f); wrote %s",
                  s, set.policies(set.policies_size() - 1).inputs().load_qps(), last.violation_rate(),
                  was.violation_rate(), last.accuracy(), was.accuracy(), out_path_.c_str());
    line = buf;
    std::lock_guard<std::mutex> target_lock(target_mu_);
    if (target_) target_(set);
  } catch (const std::exception& e) {
    line = std::string("recompiling from observed latencies failed: ") + e.what();
  }
  log_(line);
}

}  // namespace lull::serve
