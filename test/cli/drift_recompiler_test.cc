// --recompile-on-drift: the compilation (compiler/online/drift_recompile)
// and its controller (runtime/session/drift_recompiler, on a ControlLoop): the spec a set
// records, a recompilation with the same latencies reproducing the set, one
// with slower latencies changing it, the background recompiler writing
// the new set (or saying why not) after a drift event, and online
// compilation after a swap using the observed latencies.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/control_loop.h"
#include "runtime/session/drift_recompiler.h"
#include "compiler/online/drift_recompile.h"
#include "compiler/compile_inputs.h"
#include "compiler/compile_sweep.h"
#include "compiler/emit/recorded_spec.h"
#include "compiler/online/online_compiler.h"
#include "compiler/solver/solver_registry.h"
#include "schema/atomic_file.h"
#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

using namespace lull;

namespace {

compiler::CompileSpec tiny_spec() {
  compiler::CompileSpec spec;
  spec.inputs.path = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";
  spec.reduction.keep_all_models = true;
  spec.mdp.slo_us = 40'000;
  spec.mdp.workers = 2;
  spec.mdp.max_queue = 4;
  spec.mdp.intervals = 8;
  spec.mdp.batching = compiler::Batching::kVariable;
  spec.solve.horizon = 50;
  spec.loads_qps = {50, 150};
  spec.device = "cpu";
  return spec;
}

schema::PolicySet tiny_set(const ArrivalProcess& arrivals = ArrivalProcess::poisson()) {
  auto spec = tiny_spec();
  spec.mdp.arrivals = arrivals;
  auto inputs = compiler::load_compile_inputs(spec);
  auto solver = compiler::make_solver("cpu", nullptr);
  return compiler::run_sweep({std::move(inputs.profiles), spec}, *solver).set;
}

std::vector<std::vector<double>> latencies_of(const schema::PolicySet& set, double scale) {
  std::vector<std::vector<double>> out;
  for (const auto& m : set.models()) {
    out.emplace_back();
    for (double l : m.latency_us()) out.back().push_back(l * scale);
  }
  return out;
}

}  // namespace

TEST_CASE("drift recompiler: the spec a set records is the one it was compiled with", "[cli][drift]") {
  const auto set = tiny_set();
  const auto spec = compiler::recorded_compile_spec(set, {"(observed)", "", ""}, "cpu");
  const auto want = tiny_spec();
  CHECK(spec.mdp.slo_us == want.mdp.slo_us);
  CHECK(spec.mdp.workers == want.mdp.workers);
  CHECK(spec.mdp.max_queue == want.mdp.max_queue);
  CHECK(spec.mdp.intervals == want.mdp.intervals);
  CHECK(spec.mdp.discretization == compiler::Discretization::kFld);
  CHECK(spec.mdp.batching == compiler::Batching::kVariable);
  CHECK(spec.solve.horizon == 50);
  CHECK(spec.loads_qps == want.loads_qps);
  CHECK(spec.reduction.percentile == 95);
}

TEST_CASE("drift recompiler: a set compiled for an arrival pattern records it and is compiled again for it",
          "[cli][drift][arrivals]") {
  const auto gamma = tiny_set(ArrivalProcess::gamma(4));
  CHECK(compiler::recorded_compile_spec(gamma, {"(observed)", "", ""}, "cpu").mdp.arrivals == ArrivalProcess::gamma(4));
  CHECK(compiler::recorded_compile_spec(tiny_set(), {"(observed)", "", ""}, "cpu").mdp.arrivals ==
        ArrivalProcess::poisson());
  // The same latencies give back the same gamma:4 set, not a Poisson one.
  const auto same = compiler::recompile_with_latencies(gamma, latencies_of(gamma, 1.0));
  CHECK(same.arrivals() == "gamma:4");
  REQUIRE(same.policies_size() == gamma.policies_size());
  for (int i = 0; i < gamma.policies_size(); ++i)
    CHECK(same.policies(i).expected().violation_rate() == Approx(gamma.policies(i).expected().violation_rate()));
}

TEST_CASE("drift recompiler: every set held, each worker count and arrival pattern, is recompiled as a library",
          "[cli][drift][arrivals]") {
  // A library of the tiny sets for 2 workers under Poisson and gamma:4, and
  // one for 3 workers: the latencies drifted for all three.
  schema::PolicyLibrary served;
  *served.add_sets() = tiny_set();
  *served.add_sets() = tiny_set(ArrivalProcess::gamma(4));
  auto three = tiny_spec();
  three.mdp.workers = 3;
  auto inputs = compiler::load_compile_inputs(three);
  auto solver = compiler::make_solver("cpu", nullptr);
  *served.add_sets() = compiler::run_sweep({std::move(inputs.profiles), three}, *solver).set;
  const auto sets = session::DriftRecompiler::served_sets(served);
  REQUIRE(sets.size() == 3);
  const std::string out = test::temp_dir() + "/drift_recompiled_library.pb";
  std::filesystem::remove(out);
  std::vector<std::string> log;
  std::vector<schema::PolicySet> swapped;
  {
    session::DriftRecompiler r(
        served, out, compiler::recompile_with_latencies,
        [&](const std::string& bytes) { write_file_atomically(out, bytes); },
        [&](const std::string& line) { log.push_back(line); });
    r.connect([&](const std::vector<schema::PolicySet>& s) { swapped = s; });
    core::WallClock clock;
    core::ControlLoop loop(clock);
    loop.add(r);
    loop.start();
    session::DriftEvent e;
    e.corrected_latency_us = latencies_of(served.sets(0), 1.6);
    r.on_drift(e);
    CHECK(r.wait_idle() == 1);
  }
  REQUIRE(swapped.size() == 3);
  CHECK(swapped[0].arrivals().empty());  // Poisson
  CHECK(swapped[1].arrivals() == "gamma:4");
  CHECK(swapped[2].workers() == 3);
  const auto written = read_policy_library(out);  // sealed and complete
  REQUIRE(written.sets_size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(written.sets(i).workers() == served.sets(i).workers());
    CHECK(written.sets(i).arrivals() == swapped[static_cast<std::size_t>(i)].arrivals());
    CHECK(written.sets(i).models(0).latency_us(0) == Approx(served.sets(0).models(0).latency_us(0) * 1.6));
  }
  REQUIRE(log.size() == 1);
  CHECK(log[0].find("; 2 workers gamma:4 at") != std::string::npos);
  CHECK(log[0].find("; 3 workers poisson at") != std::string::npos);
}

TEST_CASE("drift recompiler: drift while a compilation runs starts one more, with the latest latencies",
          "[cli][drift]") {
  const auto set = tiny_set();
  schema::PolicyLibrary served;
  *served.add_sets() = set;
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, open = false;
  std::vector<double> compiled_first_latency;  // of each compilation, model 0 at batch 1
  const auto recompile = [&](const schema::PolicySet& s, const std::vector<std::vector<double>>& latency_us) {
    std::unique_lock<std::mutex> lock(mu);
    compiled_first_latency.push_back(latency_us[0][0]);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
    return s;
  };
  session::DriftRecompiler r(
      served, test::temp_dir() + "/drift_coalesced.pb", recompile, [](const std::string&) {},
      [](const std::string&) {});
  core::WallClock clock;
  core::ControlLoop loop(clock);
  loop.add(r);
  loop.start();
  session::DriftEvent e;
  e.corrected_latency_us = latencies_of(set, 1.1);
  r.on_drift(e);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started; });  // the first runs
  }
  for (double scale : {1.2, 1.3, 1.4}) {  // each replaces the one waiting
    e.corrected_latency_us = latencies_of(set, scale);
    r.on_drift(e);
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  CHECK(r.wait_idle() == 2);
  loop.stop();
  REQUIRE(compiled_first_latency.size() == 2);
  CHECK(compiled_first_latency[0] == Approx(set.models(0).latency_us(0) * 1.1));
  CHECK(compiled_first_latency[1] == Approx(set.models(0).latency_us(0) * 1.4));
}

TEST_CASE("drift recompiler: the profiled latencies give back the same policies, slower ones change them",
          "[cli][drift]") {
  const auto set = tiny_set();
  const auto same = compiler::recompile_with_latencies(set, latencies_of(set, 1.0));
  REQUIRE(same.policies_size() == set.policies_size());
  for (int i = 0; i < set.policies_size(); ++i) {
    INFO("policy " << i);
    CHECK(std::vector<unsigned>(same.policies(i).action_model().begin(), same.policies(i).action_model().end()) ==
          std::vector<unsigned>(set.policies(i).action_model().begin(), set.policies(i).action_model().end()));
    CHECK(std::vector<unsigned>(same.policies(i).action_batch().begin(), same.policies(i).action_batch().end()) ==
          std::vector<unsigned>(set.policies(i).action_batch().begin(), set.policies(i).action_batch().end()));
    CHECK(same.policies(i).expected().violation_rate() == Approx(set.policies(i).expected().violation_rate()));
  }
  // Everything 60% slower: the slow model no longer fits the 40 ms SLO at batch 2
  // (16 ms -> 25.6 ms plus queueing), so the expectations change.
  const auto slower = compiler::recompile_with_latencies(set, latencies_of(set, 1.6));
  REQUIRE(slower.policies_size() == 2);
  CHECK(slower.models(0).latency_us(0) == Approx(set.models(0).latency_us(0) * 1.6));
  CHECK(slower.policies(1).expected().accuracy() < set.policies(1).expected().accuracy());
  CHECK(slower.provenance().find("observed") != std::string::npos);
  // Latencies past the SLO: refused, naming why.
  CHECK_THROWS_AS(compiler::recompile_with_latencies(set, latencies_of(set, 100.0)), std::invalid_argument);
}

TEST_CASE("drift recompiler: a drift event writes the recompiled set, a failure is one log line", "[cli][drift]") {
  const auto set = tiny_set();
  const std::string out = test::temp_dir() + "/drift_recompiled.pb";
  std::filesystem::remove(out);
  std::vector<std::string> log;
  {
    schema::PolicyLibrary served;
    *served.add_sets() = set;
    session::DriftRecompiler r(
        served, out, compiler::recompile_with_latencies,
        [&](const std::string& bytes) { write_file_atomically(out, bytes); },
        [&](const std::string& line) { log.push_back(line); });
    core::WallClock clock;
    core::ControlLoop loop(clock);
    loop.add(r);
    loop.start();
    session::DriftEvent e;
    e.corrected_latency_us = latencies_of(set, 100.0);  // infeasible
    r.on_drift(e);
    CHECK(r.wait_idle() == 1);
    REQUIRE(log.size() == 1);
    CHECK(log[0].find("failed") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
    e.corrected_latency_us = latencies_of(set, 1.6);
    r.on_drift(e);
    CHECK(r.wait_idle() == 2);
  }
  REQUIRE(log.size() == 2);
  CHECK(log[1].find("recompiled from observed latencies") != std::string::npos);
  CHECK(log[1].find(out) != std::string::npos);
  const auto written = read_policy_set(out);  // sealed and complete
  CHECK(written.models(0).latency_us(0) == Approx(set.models(0).latency_us(0) * 1.6));
}

TEST_CASE("drift recompiler: after a swap, online compilation uses the observed latencies", "[cli][drift][online]") {
  // What `lull serve --recompile-on-drift --online-compile on` does after a
  // swap: the online compiler takes the recompiled set's models as profiles,
  // so a policy compiled afterwards is the one the recompiled set holds.
  const auto set = tiny_set();
  const auto slower = compiler::recompile_with_latencies(set, latencies_of(set, 1.6));
  compiler::OnlineCompiler online(compiler::recorded_compile_spec(set, tiny_spec().inputs, "cpu"));
  const int workers = static_cast<int>(set.workers());
  const double load = set.policies(1).inputs().load_qps();
  const auto profiled = online.compile(workers, load);
  CHECK(profiled.policies(0).expected().accuracy() == Approx(set.policies(1).expected().accuracy()));
  online.use_profiles(compiler::profiles_of(slower));
  const auto observed = online.compile(workers, load);
  CHECK(online.compilations() == 2);  // the cache was dropped
  CHECK(observed.models(0).latency_us(0) == Approx(slower.models(0).latency_us(0)));
  CHECK(observed.policies(0).expected().accuracy() == Approx(slower.policies(1).expected().accuracy()));
  CHECK(observed.policies(0).expected().violation_rate() == Approx(slower.policies(1).expected().violation_rate()));
  CHECK(std::vector<unsigned>(observed.policies(0).action_model().begin(), observed.policies(0).action_model().end()) ==
        std::vector<unsigned>(slower.policies(1).action_model().begin(), slower.policies(1).action_model().end()));
  CHECK(observed.policies(0).expected().accuracy() != Approx(profiled.policies(0).expected().accuracy()));
}
