// `lull simulate --autoscale` in process: the manager's autoscaler drives
// the simulated worker pool under the real Dispatcher. A step in the load
// scales out (workers serve after the provisioning delay) and, after the
// hold-off, back in one step at a time through drains; no query is lost.
#include <catch2/catch.hpp>

#include <algorithm>

#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"
#include "runtime/sim/result_json.h"
#include "test/sim/worker_count_check.h"
#include "test/support/runtime_test_support.h"

namespace {

using lull::core::PolicyTable;

// The tiny table for 2..8 workers, 10 QPS a worker at 1% (tiny_scaling_library).
std::vector<PolicyTable> library() { return lull::test::tiny_scaling_library(); }

lull::sim::SimOptions autoscaled(const std::string& provisioning) {
  lull::sim::SimOptions o;
  o.library = library();
  o.workers_up = 2;
  o.autoscale.enabled = true;
  o.autoscale.provisioning = provisioning;
  o.autoscale.options.forecast = "window_max:10";
  o.autoscale.options.lead_us = 5'000'000;
  o.autoscale.options.scale_in_holdoff_us = 20'000'000;
  return o;
}

lull::sim::SimResult run(const lull::sim::SimOptions& o) {
  const auto lib = library();
  // 15 QPS for 60 s, 50 QPS for 60 s, 15 QPS for 180 s; nearly regular
  // gaps (Gamma, CV^2 0.02), so each second's count is close to its rate and
  // the windowed maximum sees the step, not Poisson noise.
  lull::sim::RateArrivals arrivals({{0, 60, 15}, {60, 120, 50}, {120, 300, 15}}, lull::sim::ArrivalProcess::gamma(0.02),
                                   11);
  lull::sim::CompiledLatency latency(lib[0]);
  return lull::sim::simulate(lib[0], arrivals, latency, o);
}

}  // namespace

TEST_CASE("autoscaled simulation: a step in the load scales out and back in, no query lost", "[sim][autoscale]") {
  const lull::sim::SimResult r = run(autoscaled("fixed:5"));
  REQUIRE(r.autoscale);
  const auto& a = *r.autoscale;
  CHECK(r.completed == r.arrivals);
  CHECK(r.dropped == 0);
  REQUIRE(a.scale_events.size() >= 3);
  // Out: once the step is seen (at most a couple of ticks after 60 s), to
  // what 55 QPS needs: 6 workers.
  const auto& out = a.scale_events.front();
  CHECK(out.action == lull::manager::ScaleDecision::Action::kScaleOut);
  CHECK(out.t_us >= 60'000'000);
  CHECK(out.t_us <= 62'000'000);
  CHECK(out.before.up + out.count == 6);
  // The new workers serve one provisioning delay later.
  const auto six =
      std::find_if(a.workers_over_time.begin(), a.workers_over_time.end(), [](const auto& s) { return s.up == 6; });
  REQUIRE(six != a.workers_over_time.end());
  CHECK(six->t_s == Approx(out.t_us * 1e-6 + 5));
  // In: one step at a time (6 -> 4 -> 2), the first a hold-off after the
  // scale-out, the next a step interval (10 s by default) later, drained (their slots freed: never more than 6 in use).
  std::vector<lull::manager::ScaleDecision> ins;
  for (const auto& e : a.scale_events)
    if (e.action == lull::manager::ScaleDecision::Action::kScaleIn) ins.push_back(e);
  REQUIRE(ins.size() == 2);
  CHECK(ins[0].t_us - out.t_us >= 20'000'000);
  CHECK(ins[1].t_us - ins[0].t_us >= 10'000'000);
  for (const auto& e : ins) CHECK(e.count == 2);
  CHECK(a.workers_over_time.back().up == 2);
  CHECK(a.workers_over_time.back().draining == 0);
  CHECK(lull::test::one_entry_per_change(a.workers_over_time));
  CHECK(a.max_slots_used == 6);
  // Paid for: more than 2 workers all along, less than 6.
  CHECK(r.worker_seconds > 2 * r.simulated_s);
  CHECK(r.worker_seconds < 6 * r.simulated_s);
  // Every event has its log line with the reason.
  REQUIRE(a.log.size() == a.scale_events.size());
  for (std::size_t i = 0; i < a.log.size(); ++i)
    CHECK(a.log[i].find("reason=" + a.scale_events[i].reason) != std::string::npos);
  CHECK(a.capacity_patterns.empty());  // a Poisson library: capacity read for Poisson throughout
}

TEST_CASE("autoscaled simulation: capacity follows the arrival pattern the Dispatcher serves",
          "[sim][autoscale][arrivals]") {
  // The tiny library at 100 QPS a worker (1%), and the same counts compiled
  // for gamma:4 at 25 QPS a worker.
  auto lib = library();
  const std::size_t poisson_sets = lib.size();
  for (std::size_t i = 0; i < poisson_sets; ++i) {
    for (auto& p : lib[i].policies) p.load_qps *= 10;
    auto t = lib[i];
    t.arrivals = lull::ArrivalProcess::gamma(4);
    t.policies[0].load_qps = 25.0 * t.workers;
    t.policies[1].load_qps = 50.0 * t.workers;
    lib.push_back(t);
  }
  auto o = autoscaled("fixed:5");
  o.library = lib;
  // 80 QPS of gamma:4 traffic: the estimator's window (8000 arrivals) is full after ~100 s.
  lull::sim::RateArrivals arrivals({{0, 240, 80}}, lull::sim::ArrivalProcess::gamma(4), 5);
  lull::sim::CompiledLatency latency(lib[0]);
  const lull::sim::SimResult r = lull::sim::simulate(lib[0], arrivals, latency, o);
  REQUIRE(r.autoscale);
  const auto& a = *r.autoscale;
  CHECK(r.completed == r.arrivals);
  // The pattern switcher moved to gamma:4 once its estimate was ready, and
  // the next decision read capacity for it (once: it stays there).
  REQUIRE(r.pattern_switches >= 1);
  REQUIRE(a.capacity_patterns.size() == 1);
  CHECK(a.capacity_patterns[0].pattern == lull::ArrivalProcess::gamma(4));
  CHECK(a.capacity_patterns[0].t_s > 90);
  // 80 QPS (and its bursts) fits the 2 workers by Poisson's capacity (200
  // QPS), not by gamma:4's (50 QPS): the autoscaler scales out then, reading
  // 25 QPS a worker.
  REQUIRE(!a.scale_events.empty());
  const auto& out = a.scale_events.front();
  CHECK(out.action == lull::manager::ScaleDecision::Action::kScaleOut);
  CHECK(out.t_us * 1e-6 >= a.capacity_patterns[0].t_s);
  CHECK(out.capacity_up_qps == Approx(25.0 * out.before.up));
  CHECK(out.need >= 4);
}

TEST_CASE("autoscaled simulation: drawn provisioning delays are reproducible and cost worker-seconds while starting",
          "[sim][autoscale]") {
  const auto a = run(autoscaled("uniform:5:30"));
  const auto b = run(autoscaled("uniform:5:30"));
  CHECK(a.worker_seconds == b.worker_seconds);
  CHECK(a.violated == b.violated);
  CHECK(a.completed == a.arrivals);
  // Slower workers: the same decisions are paid for longer before they serve.
  const auto fixed = run(autoscaled("fixed:5"));
  CHECK(a.worker_seconds > fixed.worker_seconds - 1e-9);
}

TEST_CASE("autoscaled simulation refuses worker events and a floor above the library", "[sim][autoscale]") {
  auto o = autoscaled("fixed:5");
  o.worker_events = lull::sim::parse_fail("0@1:1");
  CHECK_THROWS_WITH(run(o), Catch::Contains("not with --fail"));
  o = autoscaled("fixed:5");
  o.autoscale.options.min_workers = 9;
  CHECK_THROWS_WITH(run(o), Catch::Contains("floor (9 workers)"));
}
