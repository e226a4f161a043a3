// Jellyfish+'s rule on the tiny table (SLO 150 ms, 2 workers):
//   fast: 10, 20, 30 ms for b = 1..3  -> b/lat = 100 QPS per worker at any b
//   slow: 40, 60, 80 ms               -> 25, 33.3 QPS (b = 3 exceeds SLO/2 = 75 ms)
#include <catch2/catch.hpp>

#include "runtime/baseline_plan.h"
#include "test/runtime/runtime_test_support.h"

using namespace lull::runtime;

TEST_CASE("jellyfish+ picks the most accurate model that keeps up within SLO/2", "[runtime][baseline]") {
  auto table = lull::test::tiny_table();
  CHECK(baseline_batch_limit(table) == 2);  // N
  // Per-worker load 50 QPS: slow needs b/lat >= 52.5: no. Fast: b = 1, 2 qualify.
  CHECK(jellyfish_max_batch(table, 1, 100) == 0);
  CHECK(jellyfish_max_batch(table, 0, 100) == 2);
  // Per-worker 30 QPS: slow b = 2 gives 33.3 >= 31.5 and 60 ms <= 75 ms.
  CHECK(jellyfish_max_batch(table, 1, 60) == 2);
  CHECK(jellyfish_max_batch(table, 1, 40) == 2);  // 20 QPS: b = 1 (25) and b = 2 qualify

  table.policies[0].load_qps = 60;
  table.policies[1].load_qps = 1000;  // 500 per worker: nothing qualifies
  const auto plan = jellyfish_plan(table);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].model == 1);
  CHECK(plan[0].max_batch == 2);
  CHECK(plan[1].model == 0);
  CHECK(plan[1].max_batch == 2);
}
