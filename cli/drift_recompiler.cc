#include "cli/drift_recompiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "cli/output_file.h"
#include "compiler/compile_sweep.h"
#include "compiler/solver/solver_registry.h"
#include "schema/policy_file.h"

namespace lull::cli {

compiler::CompileSpec compile_spec_of(const schema::PolicySet& set) {
  if (set.policies_size() == 0) throw std::invalid_argument("the policy set holds no policies");
  const auto& in = set.policies(0).inputs();
  compiler::CompileSpec spec;
  spec.inputs.path = "(latencies observed while serving)";  // names the source in errors
  spec.inputs.task = set.task();
  spec.reduction.percentile = in.percentile() > 0 ? in.percentile() : 95;
  spec.mdp.slo_us = set.slo_ms() * 1000;
  spec.mdp.workers = static_cast<int>(set.workers());
  spec.mdp.max_queue = static_cast<int>(in.max_queue());
  spec.mdp.discretization = in.discretization() == schema::MD ? compiler::Discretization::kMd : compiler::Discretization::kFld;
  spec.mdp.intervals = in.intervals() > 0 ? static_cast<int>(in.intervals()) : spec.mdp.intervals;
  spec.mdp.batching = in.batching() == schema::VARIABLE ? compiler::Batching::kVariable : compiler::Batching::kMaximal;
  if (in.horizon() > 0) spec.solve.horizon = static_cast<int>(in.horizon());
  for (const auto& p : set.policies()) spec.loads_qps.push_back(p.inputs().load_qps());
  spec.device = "cpu";
  return spec;
}

compiler::ReducedProfiles profiles_with_latencies(const schema::PolicySet& set,
                                                  const std::vector<std::vector<double>>& latency_us) {
  if (latency_us.size() != static_cast<size_t>(set.models_size()))
    throw std::invalid_argument("latencies for " + std::to_string(latency_us.size()) + " models, the set has " +
                                std::to_string(set.models_size()));
  const size_t sizes = static_cast<size_t>(compile_spec_of(set).mdp.max_queue) + 1;
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

schema::PolicySet recompile_with_latencies(const schema::PolicySet& set,
                                           const std::vector<std::vector<double>>& latency_us) {
  const compiler::CompileSpec spec = compile_spec_of(set);
  compiler::validate_compile_spec(spec);
  compiler::SweepRequest request{profiles_with_latencies(set, latency_us), spec};
  compiler::check_slo_feasible(request.profiles, spec.mdp.slo_us);
  auto solver = compiler::make_solver("cpu", nullptr);
  return compiler::run_sweep(request, *solver).set;
}

DriftRecompiler::DriftRecompiler(schema::PolicySet served, std::string out_path,
                                 std::function<void(const std::string&)> log)
    : served_(std::move(served)), out_path_(std::move(out_path)), log_(std::move(log)), thread_([this] { loop(); }) {}

DriftRecompiler::~DriftRecompiler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void DriftRecompiler::on_drift(const serve::DriftEvent& event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    latest_us_ = event.corrected_latency_us;
    pending_ = true;
  }
  cv_.notify_all();
}

int DriftRecompiler::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !pending_ && !running_; });
  return finished_;
}

void DriftRecompiler::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || pending_; });
    if (stop_) return;
    const auto latencies = latest_us_;
    pending_ = false;
    running_ = true;
    lock.unlock();
    std::string line;
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const schema::PolicySet set = recompile_with_latencies(served_, latencies);
      write_binary_output(out_path_, policy_set_bytes(set), "--recompile-on-drift");
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const auto& last = set.policies(set.policies_size() - 1).expected();
      const auto& was = served_.policies(served_.policies_size() - 1).expected();
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "lull serve: recompiled from observed latencies in %.2f s: at %g qps expected violation %.4f "
                    "(the served set: %.4f), accuracy %.4f (%.4f); wrote %s (serve it with --policies)",
                    s, set.policies(set.policies_size() - 1).inputs().load_qps(), last.violation_rate(),
                    was.violation_rate(), last.accuracy(), was.accuracy(), out_path_.c_str());
      line = buf;
    } catch (const std::exception& e) {
      line = std::string("lull serve: recompiling from observed latencies failed: ") + e.what();
    }
    log_(line);
    lock.lock();
    running_ = false;
    ++finished_;
    cv_.notify_all();
  }
}

}  // namespace lull::cli
