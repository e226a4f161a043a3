// The autoscaler's per-(class, kind) capacity for a mixed fleet: each group
// sized for the load its weight sends it, from its own kind's library, by
// the class's target.
#include <catch2/catch.hpp>

#include "test/support/autoscale_test_support.h"
#include "runtime/manager/fleet_capacity.h"

using namespace lull;

namespace {

// One class at a 1% target, kinds "a" and "b" on autoscale_library (counts
// 2..10, 100 QPS per worker within the target); splits 50/50 at 500 QPS and
// 30/70 at 1000.
core::FleetTables two_kind_fleet() {
  core::FleetClassTables c;
  c.name = "interactive";
  c.slo_us = 150'000;
  c.max_violation = 0.01;
  for (const char* name : {"a", "b"}) {
    core::FleetKindTables k;
    k.kind = name;
    k.workers = 4;
    k.library = test::autoscale_library();
    c.kinds.push_back(k);
  }
  c.splits = {{500, {0.5, 0.5}, 0.8, 0.001}, {1000, {0.3, 0.7}, 0.8, 0.002}};
  core::FleetTables f;
  f.classes.push_back(c);
  return f;
}

}  // namespace

TEST_CASE("fleet capacity: each group is sized for its weight of the class load", "[manager][autoscale]") {
  const manager::FleetCapacity cap(two_kind_fleet());
  // 1000 QPS: a gets 300 (4 workers carry 400), b gets 700 (8 carry 800).
  auto need = cap.workers_for(0, 1000);
  REQUIRE(need.size() == 2);
  CHECK(need[0].load_qps == Approx(300));
  CHECK(need[0].workers == 4);
  CHECK(need[1].load_qps == Approx(700));
  CHECK(need[1].workers == 8);
  CHECK(need[0].enough);
  // 800 QPS takes the split at the lowest load at or above it (1000's 30/70):
  // a gets 240 (4), b 560 (6).
  need = cap.workers_for(0, 800);
  CHECK(need[0].workers == 4);
  CHECK(need[1].workers == 6);
  // 400 QPS: 50/50, 200 each: 2 workers each.
  need = cap.workers_for(0, 400);
  CHECK(need[0].workers == 2);
  CHECK(need[1].workers == 2);
  // Beyond every count's capacity: the largest, not enough.
  need = cap.workers_for(0, 3000);
  CHECK(need[1].workers == 10);
  CHECK_FALSE(need[1].enough);
  CHECK(cap.table(0, 1).max_workers() == 10);
}

TEST_CASE("fleet capacity: a kind with weight 0 needs no workers", "[manager][autoscale]") {
  auto fleet = two_kind_fleet();
  fleet.classes[0].splits = {{1000, {1.0, 0.0}, 0.8, 0.002}};
  const manager::FleetCapacity cap(fleet);
  const auto need = cap.workers_for(0, 500);
  CHECK(need[0].workers == 6);  // 500 QPS: 6 workers carry 600
  CHECK(need[1].workers == 0);
  CHECK(need[1].load_qps == 0);
}
