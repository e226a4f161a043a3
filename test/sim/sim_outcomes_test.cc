// Outcomes (runtime/sim/sim_stats.h): the one sum a sharded run and a fleet
// make of their parts' simulator results: counts added, accuracy weighted by
// satisfied queries, violation over completed ones.
#include <catch2/catch.hpp>

#include "runtime/sim/sharded_simulation.h"
#include "runtime/sim/sim_stats.h"
#include "test/support/runtime_test_support.h"

using namespace lull::sim;

namespace {

Outcomes part(std::uint64_t satisfied, std::uint64_t violated, double accuracy_sum) {
  Outcomes o;
  o.arrivals = satisfied + violated + 1;
  o.completed = satisfied + violated;
  o.dropped = 2;
  o.not_dispatched_at_end = 1;
  o.satisfied = satisfied;
  o.violated = violated;
  o.accuracy_sum = accuracy_sum;
  finish(o);
  return o;
}

}  // namespace

TEST_CASE("Outcomes: add sums the counts, finish weights accuracy by satisfied queries", "[sim][outcomes]") {
  // A small part with high accuracy and a large one with low: the mean of
  // their rates (0.65) is not the sum's.
  const Outcomes a = part(1, 1, 0.9), b = part(3, 5, 3 * 0.4);
  CHECK(a.accuracy_per_satisfied_query == Approx(0.9));
  CHECK(a.violation_rate == Approx(0.5));
  Outcomes total;
  add(total, a);
  add(total, b);
  finish(total);
  CHECK(total.arrivals == 12);
  CHECK(total.completed == 10);
  CHECK(total.dropped == 4);
  CHECK(total.not_dispatched_at_end == 2);
  CHECK(total.satisfied == 4);
  CHECK(total.violated == 6);
  CHECK(total.accuracy_per_satisfied_query == Approx((0.9 + 1.2) / 4));
  CHECK(total.violation_rate == Approx(0.6));
}

TEST_CASE("Outcomes: finish over no queries gives rates of 0", "[sim][outcomes]") {
  Outcomes none;
  none.accuracy_per_satisfied_query = none.violation_rate = 0.5;
  finish(none);
  CHECK(none.accuracy_per_satisfied_query == 0);
  CHECK(none.violation_rate == 0);
}

TEST_CASE("a sharded run's totals are its shards' Outcomes added up", "[sim][outcomes][shard]") {
  lull::core::PolicyTable t = lull::test::tiny_table();
  t.workers = 4;
  ShardedRun run{{t},
                 2,
                 2,
                 [] {
                   return std::make_unique<RateArrivals>(std::vector<RateSegment>{{0, 10, 3000}}, ArrivalProcess{}, 3);
                 },
                 [](const lull::core::PolicyTable& table, int) { return std::make_unique<CompiledLatency>(table); }};
  const SimResult r = simulate_shards(run, SimOptions{});
  REQUIRE(r.shards.size() == 2);
  REQUIRE(r.violated > 0);
  Outcomes sum;
  for (const ShardResult& s : r.shards) {
    CHECK(s.accuracy_sum > 0);
    add(sum, s);
  }
  finish(sum);
  CHECK(r.arrivals == sum.arrivals);
  CHECK(r.satisfied == sum.satisfied);
  CHECK(r.violated == sum.violated);
  CHECK(r.accuracy_sum == sum.accuracy_sum);
  CHECK(r.accuracy_per_satisfied_query == sum.accuracy_per_satisfied_query);
  CHECK(r.violation_rate == sum.violation_rate);
}
