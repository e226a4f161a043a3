#include "cli/drift_recompiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "cli/output_file.h"
#include "compiler/online/drift_recompile.h"
#include "schema/policy_file.h"

namespace lull::cli {

DriftRecompiler::DriftRecompiler(schema::PolicySet served, std::string out_path,
                                 std::function<void(const std::string&)> log)
    : served_(std::move(served)),
      out_path_(std::move(out_path)),
      log_(std::move(log)),
      worker_([this](const std::vector<std::vector<double>>& latency_us) { recompile(latency_us); }) {}

void DriftRecompiler::on_drift(const serve::DriftEvent& event) { worker_.post(event.corrected_latency_us); }

void DriftRecompiler::connect(std::function<void(const schema::PolicySet&)> target) {
  std::lock_guard<std::mutex> lock(target_mu_);
  target_ = std::move(target);
}

int DriftRecompiler::wait_idle() { return worker_.wait_idle(); }

void DriftRecompiler::recompile(const std::vector<std::vector<double>>& latency_us) {
  std::string line;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const schema::PolicySet set = compiler::recompile_with_latencies(served_, latency_us);
    write_binary_output(out_path_, policy_set_bytes(set), "--recompile-on-drift");
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

}  // namespace lull::cli
