// The table-only rules of the paper's baselines (mdp-spec section 8), each on
// a hand-checkable case of lull::test::three_models (SLO/2 = 50 ms, K = 1,
// N = 4), whose b/lat in QPS for b = 1..4 is:
//   fast: 100, 166.7, 214.3, 250
//   mid:   50,  66.7,  75,    80
//   slow:  33.3, 40,  (b >= 3 exceeds 50 ms)
#include <catch2/catch.hpp>

#include "runtime/core/baseline_plan.h"
#include "test/support/runtime_test_support.h"

using namespace lull::core;

using lull::test::three_models;

TEST_CASE("feasible batch: largest b within SLO/2 whose b/lat keeps up, factor 1.0", "[runtime][baseline]") {
  const auto t = three_models({40});
  CHECK(baseline_batch_limit(t) == 4);
  CHECK(fastest_model(t) == 0);
  // slow at 40 QPS: b = 2 gives exactly 40 QPS within 50 ms; b = 3 is past SLO/2.
  CHECK(feasible_batch(t, 2, 40) == 2);
  CHECK(feasible_batch(t, 2, 40.01) == 0);  // b = 1 gives only 33.3
  CHECK(feasible_batch(t, 2, 30) == 2);     // the largest qualifying b, not the smallest
  CHECK(feasible_batch(t, 1, 80) == 4);
  CHECK(feasible_batch(t, 1, 81) == 0);
  // The same batch fails with Jellyfish+'s 1.05: 40 < 42.
  CHECK(feasible_batch(t, 2, 40, kJellyfishHeadroom) == 0);
  CHECK(feasible_batch(t, 1, 40, kJellyfishHeadroom) == 4);
}

TEST_CASE("jellyfish+: most accurate model feasible at 1.05 and its largest batch, else fastest with N",
          "[runtime][baseline]") {
  const auto plan = jellyfish_plan(three_models({38, 40, 85, 300}));
  REQUIRE(plan.size() == 4);
  CHECK(plan[0].model == 2);  // 38 * 1.05 = 39.9 <= 40: slow, b = 2
  CHECK(plan[0].max_batch == 2);
  CHECK(plan[1].model == 1);  // 42 > 40: slow fails; mid b = 4 (80 >= 42)
  CHECK(plan[1].max_batch == 4);
  CHECK(plan[2].model == 0);  // 89.25 > 80: only fast
  CHECK(plan[2].max_batch == 4);
  CHECK(plan[3].model == 0);  // 315 > 250: no model; fastest with cap N
  CHECK(plan[3].max_batch == 4);
}

TEST_CASE("modelswitching's cap: the most accurate feasible model's batch at factor 1.0, else N",
          "[runtime][baseline]") {
  const auto t = three_models({});
  CHECK(model_switching_cap(t, 40) == 2);   // slow is feasible (b = 2) at 1.0 though not at 1.05
  CHECK(model_switching_cap(t, 45) == 4);   // slow fails; mid b = 4 (80 QPS)
  CHECK(model_switching_cap(t, 120) == 4);  // only fast keeps up: its largest b (250 QPS)
  CHECK(model_switching_cap(t, 300) == 4);  // nobody keeps up: N, so a backlog drains
}
