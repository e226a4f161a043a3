// Autoscaling and variants in a lull shard (docs/operators-guide.md "Shards"): the
// shard reads the library at its share of the load (runtime/core/shard.h), so
// its decisions at L/G must be a G-th of those one lull with all the
// shards' workers makes at L.
#include <catch2/catch.hpp>

#include "runtime/manager/capacity_table.h"
#include "runtime/manager/model_variants.h"
#include "runtime/manager/shard_variants.h"
#include "runtime/core/shard.h"
#include "test/support/autoscale_test_support.h"

using namespace lull::manager;
using lull::core::Shard;
using lull::core::shard_library;

TEST_CASE("shard autoscaling: at its share of the load a shard asks for a G-th of the workers one lull asks for",
          "[manager][autoscale][shard]") {
  // Counts 2..10, 100 QPS per worker; some loads above every capacity.
  const auto lib = lull::test::autoscale_library([](int k, int load) { return 0.7 + 0.01 * k - load * 1e-5; });
  const CapacityTarget target{0.01, 0};
  const CapacityTable whole(lib, target);
  const CapacityTable mine(shard_library(lib, {1, 2}, 0), target);
  for (double load = 30; load <= 1600; load += 37) {
    INFO("global load " << load);
    bool whole_enough = false, mine_enough = false;
    const int n = whole.fewest_workers_for(load, &whole_enough);
    const int k = mine.fewest_workers_for(load / 2, &mine_enough);
    CHECK(2 * k == n);
    CHECK(mine_enough == whole_enough);
    CHECK(mine.capacity_qps(k) * 2 == Approx(whole.capacity_qps(n)));
  }
  // The price objective: a worker-second costs the same in a shard, and each
  // score is the fleet's divided by G, so the best count is the same.
  CapacityTarget priced = target;
  priced.objective = CapacityObjective::kPrice;
  for (double price : {0.0, 50.0, 400.0}) {
    priced.worker_price = price;
    const CapacityTable whole_p(lib, priced), mine_p(shard_library(lib, {0, 2}, 0), priced);
    for (double load = 30; load <= 1000; load += 37) {
      INFO("price " << price << " global load " << load);
      CHECK(2 * mine_p.workers_for(load / 2) == whole_p.workers_for(load));
    }
  }
}

TEST_CASE("shard variants: a shard switches at a G-th of each boundary to the variant's shard view",
          "[manager][variants][shard]") {
  const auto lib = lull::test::autoscale_library();
  std::vector<ModelVariant> variants = {{"full.pb", 0, lib, {"m"}}, {"small.pb", 600, lib, {"m"}}};
  for (auto& t : variants[1].tables) t.policies.front().expected_accuracy = 0.5;  // marks the variant
  const Shard shard{2, 3};
  CHECK_THROWS_WITH(shard_variants(variants, shard, 3), Catch::Contains("9 workers"));  // no set for 9
  const auto mine = shard_variants(variants, {1, 2}, 0);
  REQUIRE(mine.size() == 2);
  CHECK(mine[1].from_qps == 300);
  CHECK(mine[1].tables.size() == 5);
  CHECK(mine[1].tables.front().workers == 1);
  CHECK(mine[1].tables.front().policies.front().load_qps == 50);
  CHECK(mine[1].tables.front().policies.front().expected_accuracy == 0.5);
  const std::vector<double> whole_from = {0, 600}, mine_from = {mine[0].from_qps, mine[1].from_qps};
  for (int current : {0, 1})
    for (double load = 10; load < 1200; load += 23) {
      INFO("current " << current << " global load " << load);
      CHECK(choose_variant(mine_from, current, load / 2, 0.1) == choose_variant(whole_from, current, load, 0.1));
    }
}
