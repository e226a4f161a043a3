// Recompilation on latency drift (why and how: see drift_recompiler.h).
#include "runtime/session/drift_recompiler.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "schema/policy_file.h"

namespace lull::session {

std::vector<schema::PolicySet> DriftRecompiler::served_sets(const schema::PolicyLibrary& served) {
  if (served.sets_size() == 0) throw std::invalid_argument("--recompile-on-drift: the served library holds no set");
  return {served.sets().begin(), served.sets().end()};
}

DriftRecompiler::DriftRecompiler(const schema::PolicyLibrary& served, std::string out_path, Recompile recompile,
                                 Write write, std::function<void(const std::string&)> log)
    : served_(served_sets(served)),
      out_path_(std::move(out_path)),
      recompile_(std::move(recompile)),
      write_(std::move(write)),
      log_(std::move(log)) {}

void DriftRecompiler::on_drift(const DriftEvent& event) {
  latest_.post(event.corrected_latency_us);
  wake_loop();
}

std::int64_t DriftRecompiler::next_tick_us() const { return latest_.has_waiting() ? 0 : kNever; }

void DriftRecompiler::tick(std::int64_t) {
  const auto latency_us = latest_.take();
  if (!latency_us) return;
  recompile(*latency_us);
  latest_.finish();
}

void DriftRecompiler::connect(std::function<void(const std::vector<schema::PolicySet>&)> target) {
  std::lock_guard<std::mutex> lock(target_mu_);
  target_ = std::move(target);
}

int DriftRecompiler::wait_idle() { return latest_.wait_idle(); }

void DriftRecompiler::recompile(const std::vector<std::vector<double>>& latency_us) {
  std::string line;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<schema::PolicySet> sets;
    for (const auto& served : served_) sets.push_back(recompile_(served, latency_us));
    if (sets.size() == 1) {
      write_(policy_set_bytes(sets.front()));
    } else {
      schema::PolicyLibrary lib;
      for (const auto& set : sets) *lib.add_sets() = set;
      write_(policy_library_bytes(lib));
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[400];
    std::snprintf(buf, sizeof buf, "recompiled from observed latencies in %.2f s:", s);
    line = buf;
    // Per set, its top load's expectations beside the served set's (its
    // worker count and pattern named when there are several sets).
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const auto& set = sets[i];
      const auto& last = set.policies(set.policies_size() - 1).expected();
      const auto& was = served_[i].policies(served_[i].policies_size() - 1).expected();
      const std::string which = sets.size() == 1 ? ""
                                                 : " " + std::to_string(set.workers()) + " workers " +
                                                       (set.arrivals().empty() ? "poisson" : set.arrivals());
      std::snprintf(buf, sizeof buf,
                    "%s%s at %g qps expected violation %.4f (the served set: %.4f), accuracy %.4f (%.4f)", i ? ";" : "",
                    which.c_str(), set.policies(set.policies_size() - 1).inputs().load_qps(), last.violation_rate(),
                    was.violation_rate(), last.accuracy(), was.accuracy());
      line += buf;
    }
    line += "; wrote " + out_path_;
    std::lock_guard<std::mutex> target_lock(target_mu_);
    if (target_) target_(sets);
  } catch (const std::exception& e) {
    line = std::string("recompiling from observed latencies failed: ") + e.what();
  }
  log_(line);
}

}  // namespace lull::session
