// lull simulate --shards (runtime/sim/sharded_simulation.h): G shards of K
// workers behind a per-request round-robin balancer are one lull of G*K
// workers. Exactly so when the policy does not depend on the load estimate
// (each worker then sees the same arrivals and takes the same actions); with
// a choice by load, each shard picks the fleet's set at its 1/G share.
#include <catch2/catch.hpp>

#include <functional>
#include <stdexcept>

#include "runtime/sim/latency_model.h"
#include "runtime/sim/sharded_simulation.h"
#include "runtime/sim/simulator.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::sim;
using lull::core::PolicyTable;

constexpr double kSeconds = 20;
constexpr std::uint64_t kSeed = 9;

// The global stream: Poisson at `qps` for kSeconds.
std::function<std::unique_ptr<ArrivalSource>()> stream(double qps) {
  return [qps] {
    return std::make_unique<RateArrivals>(std::vector<RateSegment>{{0, kSeconds, qps}}, ArrivalProcess{}, kSeed);
  };
}

SimResult one_lull(const PolicyTable& table, double qps) {
  auto arrivals = stream(qps)();
  CompiledLatency latency(table);
  SimOptions o;
  o.library = {table};
  return run_simulation(table, nullptr, *arrivals, latency, o);
}

SimResult shards(const PolicyTable& table, int g, double qps) {
  ShardedRun run{{table}, g, table.workers / g, stream(qps), [](const PolicyTable& t, int) {
                   return std::make_unique<CompiledLatency>(t);
                 }};
  return simulate_shards(run, SimOptions{});
}

// The tiny table for 4 workers: two loads whose policies serve different
// models (40 QPS: the slow, accurate one; 80 QPS: the fast one), or only
// the first load.
PolicyTable four_workers(bool two_loads) {
  PolicyTable t = lull::test::tiny_table();
  t.workers = 4;
  t.policies[0].load_qps = 40;
  t.policies[1].load_qps = 80;
  for (std::size_t s = 0; s + 1 < t.policies[0].actions.size(); ++s) {  // all but F
    t.policies[0].actions[s].model = 1;
    t.policies[1].actions[s].model = 0;
  }
  if (!two_loads) t.policies.pop_back();
  return t;
}

}  // namespace

TEST_CASE("a shard of G gets arrivals I, I+G, I+2G, ... of the stream", "[sim][shard]") {
  const auto times = [] { return std::make_unique<ReplayArrivals>(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}); };
  ShardArrivals one(times(), 1, 3);
  CHECK(lull::test::drain(one) == std::vector<std::int64_t>{1, 4});
  ShardArrivals zero(times(), 0, 3);
  CHECK(lull::test::drain(zero) == std::vector<std::int64_t>{0, 3, 6});
}

TEST_CASE("with one policy, G shards of K workers serve exactly as one lull of G*K", "[sim][shard]") {
  const PolicyTable table = four_workers(false);
  const SimResult single = one_lull(table, 400);
  REQUIRE(single.arrivals > 1000);
  // 400 QPS overloads 4 workers: queries miss and both models serve (the
  // fallback's fast one past the queue bound), so the match means something.
  REQUIRE(single.violated > 0);
  REQUIRE(single.satisfied_per_model.at(0) > 0);
  REQUIRE(single.satisfied_per_model.at(1) > 0);
  for (int g : {2, 4}) {
    INFO(g << " shards");
    const SimResult sharded = shards(table, g, 400);
    CHECK(sharded.arrivals == single.arrivals);
    CHECK(sharded.completed == single.completed);
    CHECK(sharded.satisfied == single.satisfied);
    CHECK(sharded.violated == single.violated);
    CHECK(sharded.accuracy_per_satisfied_query == Approx(single.accuracy_per_satisfied_query).epsilon(1e-12));
    CHECK(sharded.satisfied_per_model == single.satisfied_per_model);
    REQUIRE(sharded.shards.size() == static_cast<std::size_t>(g));
    std::uint64_t sum = 0;
    for (const ShardResult& s : sharded.shards) {
      CHECK(s.workers == 4 / g);
      CHECK(s.arrivals * g >= single.arrivals - g);  // round-robin: shares differ by at most one query
      sum += s.arrivals;
    }
    CHECK(sum == single.arrivals);
  }
}

TEST_CASE("each shard picks the fleet's policy at its share of the load", "[sim][shard]") {
  // At 60 QPS one lull of 4 uses the 80-QPS policy (fast model); each of 2
  // shards sees 30 QPS and must use the same policy (its view: 40 QPS for
  // 2 workers), not the 40-QPS one (slow model) its own load would name.
  const PolicyTable table = four_workers(true);
  const SimResult single = one_lull(table, 60), sharded = shards(table, 2, 60);
  const auto share_at_80 = [](const SimResult& r) {
    std::uint64_t at = 0, all = 0;
    for (const PolicyUse& p : r.policies_used) {
      CHECK(p.workers == 4);  // in the fleet's terms
      all += p.usage.queries;
      if (p.load_qps == Approx(80)) at += p.usage.queries;
    }
    return static_cast<double>(at) / static_cast<double>(all);
  };
  CHECK(share_at_80(single) > 0.9);
  CHECK(share_at_80(sharded) > 0.9);
  CHECK(sharded.accuracy_per_satisfied_query == Approx(single.accuracy_per_satisfied_query).margin(0.02));
  CHECK(sharded.violation_rate == Approx(single.violation_rate).margin(0.02));
}

TEST_CASE("a sharded run refuses what it cannot model", "[sim][shard]") {
  const PolicyTable table = four_workers(true);
  const auto latency = [](const PolicyTable& t, int) { return std::make_unique<CompiledLatency>(t); };
  // 3 shards of 1: no set for 3 workers.
  CHECK_THROWS_AS(simulate_shards(ShardedRun{{table}, 3, 1, stream(60), latency}, SimOptions{}), std::invalid_argument);
  SimOptions timeline;
  timeline.timeline = true;
  CHECK_THROWS_AS(simulate_shards(ShardedRun{{table}, 2, 2, stream(60), latency}, timeline), std::invalid_argument);
  SimOptions baseline;
  baseline.scheduler = SchedulerKind::kJellyfish;
  CHECK_THROWS_AS(simulate_shards(ShardedRun{{table}, 2, 2, stream(60), latency}, baseline), std::invalid_argument);
}

TEST_CASE("each shard serves the fleet stream's arrival pattern, named in policies_used", "[sim][shard]") {
  // A library for Poisson and gamma:4 (4 workers) under gamma:4 traffic. A
  // shard of 4 sees every 4th arrival, whose gaps have CV^2 4/4 = 1: read as
  // it looks, it served the Poisson set. Read back to the fleet's stream, it
  // serves gamma:4's as one lull does, once its estimate is ready (after as
  // many of the stream's arrivals as one lull waits for).
  PolicyTable poisson = four_workers(false), bursty = four_workers(false);
  bursty.arrivals = ArrivalProcess::gamma(4);
  const std::vector<PolicyTable> library = {poisson, bursty};
  const auto traffic = [] {
    return std::make_unique<RateArrivals>(std::vector<RateSegment>{{0, 1500, 40}}, ArrivalProcess::gamma(4), kSeed);
  };
  const auto gamma_share = [](const SimResult& r) {
    std::uint64_t bursty_queries = 0, all = 0;
    for (const PolicyUse& p : r.policies_used) {
      CHECK(p.workers == 4);
      all += p.usage.queries;
      if (p.arrivals == ArrivalProcess::gamma(4)) bursty_queries += p.usage.queries;
    }
    return static_cast<double>(bursty_queries) / static_cast<double>(all);
  };
  auto arrivals = traffic();
  CompiledLatency latency(poisson);
  SimOptions o;
  o.library = library;
  const SimResult single = run_simulation(poisson, nullptr, *arrivals, latency, o);
  REQUIRE(single.arrivals > 50'000);
  const SimResult sharded =
      simulate_shards(ShardedRun{library, 4, 1, traffic,
                                 [](const PolicyTable& t, int) { return std::make_unique<CompiledLatency>(t); }},
                      SimOptions{});
  CHECK(gamma_share(single) > 0.8);
  CHECK(gamma_share(sharded) > 0.8);  // read as it looks: 0
}
