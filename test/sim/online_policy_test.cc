// Online compilation's mechanism on the tiny hand-made table (no compiler:
// a fake PolicyCompiler): the catalog's choice by (workers up, load), and in
// the simulator a worker failure that triggers one compilation whose policy,
// for K-1 workers, is swapped in after the modelled compile delay.
#include <catch2/catch.hpp>

#include <algorithm>

#include "runtime/core/dispatcher.h"
#include "runtime/core/policy_catalog.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"
#include "runtime/sim/trace_spec.h"
#include "test/support/runtime_test_support.h"

namespace {

using lull::core::PolicyCatalog;
using lull::core::PolicyRequest;
using lull::core::PolicyTable;

PolicyTable tiny_for(int workers) {
  PolicyTable t = lull::test::tiny_table();  // loads {100, 200}
  t.workers = workers;
  return t;
}

// Returns the tiny table's 200 QPS action table for the request, tagged so a
// test can tell which request it answered.
class FakeCompiler final : public lull::core::PolicyCompiler {
 public:
  PolicyTable compile(const PolicyRequest& r) override {
    requests.push_back(r);
    PolicyTable t = tiny_for(r.workers);
    t.policies.erase(t.policies.begin());
    t.policies[0].load_qps = r.load_qps;
    t.policies[0].expected_accuracy = 0.001 * r.workers;  // the tag
    return t;
  }
  std::vector<PolicyRequest> requests;
};

lull::sim::SimResult run(const lull::sim::SimOptions& o) {
  const PolicyTable table = tiny_for(3);
  lull::sim::RateArrivals arrivals({{0, 10, 40}}, lull::sim::ArrivalProcess{}, 7);
  lull::sim::CompiledLatency latency(table);
  return lull::sim::simulate(table, arrivals, latency, o);
}

}  // namespace

TEST_CASE("the catalog picks by workers up, then load, conservative while a policy is missing", "[online]") {
  PolicyCatalog c({tiny_for(2), tiny_for(4)});
  CHECK(c.choose(4, 150, true).workers == 4);
  CHECK(c.choose(4, 150, true).policy->load_qps == 200);
  CHECK(c.choose(4, 90, true).policy->load_qps == 100);
  // 3 up: the nearest worker count below (each of its workers expects more).
  CHECK(c.choose(3, 90, true).workers == 2);
  // 1 up, only larger tables: the 2-worker table at the load per worker,
  // 60 * 2 / 1 = 120 -> the 200 QPS policy; without online compilation the
  // stale policy at the load itself.
  CHECK(c.choose(1, 60, true).policy->load_qps == 200);
  CHECK(c.choose(1, 60, false).policy->load_qps == 100);
  CHECK(c.choose(4, 900, true).policy->load_qps == 200);  // above the grid: the highest
  // What is missing: the grid load covering the estimate for the workers up;
  // above the grid the estimate rounded up to the grid's step (100).
  CHECK(c.wanted(4, 150).workers == 0);
  CHECK(c.wanted(3, 150).workers == 3);
  CHECK(c.wanted(3, 150).load_qps == 200);
  CHECK(c.wanted(4, 450).load_qps == 500);
  // An added policy joins its worker count in load order and is chosen.
  PolicyTable more = tiny_for(4);
  more.policies.erase(more.policies.begin());
  more.policies[0].load_qps = 500;
  c.add(more);
  CHECK(c.choose(4, 450, true).policy->load_qps == 500);
  CHECK(c.wanted(4, 450).workers == 0);
  // A set for 3 workers compiled online at 100 QPS only: at 150 QPS it does
  // not cover the load; the 4-worker set at 150 x 4 / 3 = 200 expects more per
  // worker (200 / 4 = 50 > 100 / 3), so it serves until 3 @ 200 arrives.
  PolicyTable three = tiny_for(3);
  three.policies.pop_back();
  c.add(three);
  CHECK(c.choose(3, 90, true).workers == 3);
  CHECK(c.choose(3, 150, true).workers == 4);
  CHECK(c.choose(3, 150, true).policy->load_qps == 200);
  CHECK(c.choose(3, 150, false).workers == 3);
  // Another task's table is refused.
  PolicyTable other = tiny_for(5);
  other.task = "other";
  CHECK_THROWS_WITH(c.add(other), Catch::Contains("task"));
}

TEST_CASE("a worker failure triggers one compilation, and its K-1 policy is swapped in after the delay",
          "[online][sim]") {
  FakeCompiler compiler;
  lull::sim::SimOptions o;
  o.compiler = &compiler;
  o.compile_delay_us = 300'000;
  o.worker_events = lull::sim::parse_fail("1@2:5");  // 3 workers -> 2 from 2 s to 7 s
  const auto r = run(o);
  // 40 QPS: the grid load covering it is 100; one request, for 2 workers.
  REQUIRE(compiler.requests.size() == 1);
  CHECK(compiler.requests[0].workers == 2);
  CHECK(compiler.requests[0].load_qps == 100);
  CHECK(r.compilations == 1);
  CHECK(r.completed == r.arrivals);  // nothing lost, the failed worker's batch included
  auto used = [&](int workers) {
    std::uint64_t q = 0;
    for (const auto& p : r.policies_used)
      if (p.workers == workers) q += p.usage.queries;
    return q;
  };
  // The swapped-in policy is the compiled one (its tag), used during the outage.
  const auto two =
      std::find_if(r.policies_used.begin(), r.policies_used.end(), [](const auto& p) { return p.workers == 2; });
  REQUIRE(two != r.policies_used.end());
  CHECK(two->expected_accuracy == Approx(0.002));
  // About 40 QPS x (5 s - 0.3 s) go through it; the rest under the 3-worker one.
  CHECK(used(2) > 120);
  CHECK(used(2) < 220);
  CHECK(used(3) > 150);
  // Provisioned workers: the failed one still counts (3 x the run).
  CHECK(r.worker_seconds == Approx(3 * r.simulated_s));

  // A compile slower than the outage: the policy arrives after the worker is
  // back, so the 2-worker policy takes no decision; runs are reproducible.
  FakeCompiler slow;
  o.compiler = &slow;
  o.compile_delay_us = 6'000'000;
  const auto late = run(o);
  CHECK(
      std::none_of(late.policies_used.begin(), late.policies_used.end(), [](const auto& p) { return p.workers == 2; }));
  FakeCompiler again;
  o.compiler = &again;
  const auto late2 = run(o);
  CHECK(late2.violated == late.violated);
  CHECK(late2.accuracy_per_satisfied_query == late.accuracy_per_satisfied_query);
}

TEST_CASE("without online compilation a failure keeps the stale policy, and --workers-at changes the pool",
          "[online][sim]") {
  lull::sim::SimOptions o;
  o.worker_events = lull::sim::parse_fail("0@1:2");
  o.worker_events.push_back(lull::sim::parse_workers_at("5:2"));
  const auto r = run(o);
  CHECK(r.compilations == 0);
  CHECK(r.completed == r.arrivals);
  for (const auto& p : r.policies_used) CHECK(p.workers == 3);
  // 3 workers for 5 s, then 2 until the end.
  CHECK(r.worker_seconds == Approx(3 * 5 + 2 * (r.simulated_s - 5)));
}

TEST_CASE("worker events: syntax and one-line errors", "[online][sim]") {
  const auto f = lull::sim::parse_fail("3@1.5:2");
  REQUIRE(f.size() == 2);
  CHECK(f[0].time_us == 1'500'000);
  CHECK(f[1].time_us == 3'500'000);
  CHECK(f[0].value == 3);
  CHECK(lull::sim::parse_workers_at("10:7").value == 7);
  CHECK_THROWS_WITH(lull::sim::parse_fail("3@1.5"), Catch::Contains("WORKER@T:DURATION"));
  CHECK_THROWS_WITH(lull::sim::parse_fail("x@1:2"), Catch::Contains("--fail WORKER"));
  CHECK_THROWS_WITH(lull::sim::parse_workers_at("10:0"), Catch::Contains("--workers-at K"));
  const std::string plan = lull::test::write_temp("plan.json",
                                                  "{\"schedule\": [{\"start_s\": 0, \"load_qps\": 100, \"workers\": 3},"
                                                  " {\"start_s\": 30, \"load_qps\": 300, \"workers\": 5}]}");
  const auto s = lull::sim::read_workers_schedule(plan);
  REQUIRE(s.size() == 2);
  CHECK(s[1].time_us == 30'000'000);
  CHECK(s[1].value == 5);
  const std::string bad =
      lull::test::write_temp("bad_plan.json", "{\"schedule\": [{\"start_s\": 0, \"workers\": 2.5}]}");
  CHECK_THROWS_WITH(lull::sim::read_workers_schedule(bad), Catch::Contains("schedule[0].workers"));
  const std::string broken = lull::test::write_temp("broken_plan.json", "{\"schedule\": [");
  CHECK_THROWS_WITH(lull::sim::read_workers_schedule(broken), Catch::Contains("broken_plan.json"));
}

TEST_CASE("trace scale (--trace-scale) multiplies the rates and is refused for replayed arrivals",
          "[online][sim][trace]") {
  auto spec = lull::sim::parse_trace_spec("constant:100:20");
  lull::sim::set_trace_scale(&spec, 1.5);
  auto source = lull::sim::make_arrival_source(spec, lull::sim::ArrivalProcess{}, 3);
  const auto times = lull::test::drain(*source);
  CHECK(times.size() > 2700);  // 3000 expected (Poisson, sd ~55)
  CHECK(times.size() < 3300);
  auto arrivals = lull::sim::parse_trace_spec("arrivals:/x.txt");
  CHECK_THROWS_WITH(lull::sim::set_trace_scale(&arrivals, 2), Catch::Contains("arrivals"));
  CHECK_THROWS_WITH(lull::sim::set_trace_scale(&spec, 0), Catch::Contains("--trace-scale"));
}
