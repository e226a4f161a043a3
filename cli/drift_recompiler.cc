#include "cli/drift_recompiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "cli/output_file.h"
#include "compiler/compile_sweep.h"
#include "compiler/emit/recorded_spec.h"
#include "compiler/solver/solver_registry.h"
#include "schema/policy_file.h"

namespace lull::cli {

namespace {
// The spec the set records (compiler/emit/recorded_spec.h), on the CPU solver;
// the profiles are the observed latencies, named so in errors.
compiler::CompileSpec spec_of(const schema::PolicySet& set) {
  return compiler::recorded_compile_spec(set, {"(latencies observed while serving)", "", ""}, "cpu");
}
}  // namespace

compiler::ReducedProfiles profiles_with_latencies(const schema::PolicySet& set,
                                                  const std::vector<std::vector<double>>& latency_us) {
  if (latency_us.size() != static_cast<size_t>(set.models_size()))
    throw std::invalid_argument("latencies for " + std::to_string(latency_us.size()) + " models, the set has " +
                                std::to_string(set.models_size()));
  const size_t sizes = static_cast<size_t>(spec_of(set).mdp.max_queue) + 1;
  compiler::ReducedProfiles out;
  out.task = set.task();
  out.provenance = set.provenance() + "; recompiled from latencies observed while serving";
  for (int m = 0; m < set.models_size(); ++m) {
    const auto& lat = latency_us[static_cast<size_t>(m)];
    if (lat.size() < sizes)
      throw std::invalid_argument("model " + set.models(m).name() + ": latencies for " + std::to_string(lat.size()) +
                                  " batch sizes, N+1 = " + std::to_string(sizes) + " needed");
    out.models.push_back({set.models(m).name(), set.models(m).accuracy(), {lat.begin(), lat.begin() + sizes}});
  }
  std::stable_sort(out.models.begin(), out.models.end(),
                   [](const compiler::ModelTable& a, const compiler::ModelTable& b) { return a.lat_us(1) < b.lat_us(1); });
  return out;
}

compiler::ReducedProfiles profiles_of(const schema::PolicySet& set) {
  std::vector<std::vector<double>> latency_us;
  for (const auto& m : set.models()) latency_us.emplace_back(m.latency_us().begin(), m.latency_us().end());
  return profiles_with_latencies(set, latency_us);
}

schema::PolicySet recompile_with_latencies(const schema::PolicySet& set,
                                           const std::vector<std::vector<double>>& latency_us) {
  const compiler::CompileSpec spec = spec_of(set);
  compiler::validate_compile_spec(spec);
  compiler::SweepRequest request{profiles_with_latencies(set, latency_us), spec};
  compiler::check_slo_feasible(request.profiles, spec.mdp.slo_us);
  auto solver = compiler::make_solver("cpu", nullptr);
  return compiler::run_sweep(request, *solver).set;
}

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
    const schema::PolicySet set = recompile_with_latencies(served_, latency_us);
    write_binary_output(out_path_, policy_set_bytes(set), "--recompile-on-drift");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& last = set.policies(set.policies_size() - 1).expected();
    const auto& was = served_.policies(served_.policies_size() - 1).expected();
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "lull serve: recompiled from observed latencies in %.2f s: at %g qps expected violation %.4f "
                  "(the served set: %.4f), accuracy %.4f (%.4f); wrote %s",
                  s, set.policies(set.policies_size() - 1).inputs().load_qps(), last.violation_rate(),
                  was.violation_rate(), last.accuracy(), was.accuracy(), out_path_.c_str());
    line = buf;
    std::lock_guard<std::mutex> target_lock(target_mu_);
    if (target_) target_(set);
  } catch (const std::exception& e) {
    line = std::string("lull serve: recompiling from observed latencies failed: ") + e.what();
  }
  log_(line);
}

}  // namespace lull::cli
