// The capacity table over a library compiled for several arrival patterns:
// each worker count reads its set for the pattern it is given,
// the least bursty at or above it (runtime/manager/capacity_table.h).
#include <catch2/catch.hpp>

#include "runtime/manager/capacity_table.h"
#include "test/support/autoscale_test_support.h"

using lull::ArrivalProcess;
using namespace lull::manager;

using lull::test::pattern_library;

TEST_CASE("capacity table: each worker count reads its set for the given arrival pattern",
          "[manager][autoscale][arrivals]") {
  const auto lib = pattern_library();
  const CapacityTarget target{0.01, 0};
  const CapacityTable poisson(lib, target);
  CHECK(poisson.pattern() == ArrivalProcess::poisson());
  CHECK(poisson.worker_counts() == std::vector<int>{2, 4, 6, 8, 10});  // one row per count, not per set
  CHECK(poisson.capacity_qps(4) == 400);
  CHECK(poisson.fewest_workers_for(400) == 4);

  const CapacityTable gamma4(lib, target, ArrivalProcess::gamma(4));
  CHECK(gamma4.capacity_qps(4) == 200);  // 60 per worker, on the 100 QPS grid
  CHECK(gamma4.fewest_workers_for(400) == 8);
  CHECK(CapacityTable(lib, target, ArrivalProcess::gamma(2)).fewest_workers_for(400) == 6);
  // Between compiled patterns: the burstier one covers it.
  CHECK(CapacityTable(lib, target, ArrivalProcess::gamma(3)).fewest_workers_for(400) == 8);
  // Beyond the library: its most bursty sets.
  CHECK(CapacityTable(lib, target, ArrivalProcess::gamma(16)).fewest_workers_for(400) == 8);
  // Another family with none compiled: the least bursty set covering it, of any family.
  CHECK(CapacityTable(lib, target, ArrivalProcess::batch(2)).fewest_workers_for(400) == 6);
  // A library of one set per count serves every pattern with it.
  const CapacityTable single(lull::test::autoscale_library(), target, ArrivalProcess::gamma(8));
  CHECK(single.fewest_workers_for(400) == 4);
}
