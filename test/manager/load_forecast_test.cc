// The autoscaler's inputs: forecasters, arrival envelope and capacity
// table, each rule on its own
// with hand-computed numbers.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "runtime/manager/arrival_envelope.h"
#include "runtime/manager/capacity_table.h"
#include "runtime/manager/load_forecast.h"
#include "test/support/autoscale_test_support.h"

using namespace lull::manager;
constexpr std::int64_t kS = 1'000'000;

TEST_CASE("window maximum forecasts the highest rate of its window and forgets older ones", "[manager][autoscale]") {
  auto f = make_forecaster("window_max:3");
  CHECK(f->forecast(0, 0) == 0);
  f->observe(1 * kS, 100);
  f->observe(2 * kS, 500);
  f->observe(3 * kS, 200);
  CHECK(f->forecast(3 * kS, 5 * kS) == 500);
  f->observe(4 * kS, 150);  // window (1, 4]: 500 still in
  CHECK(f->forecast(4 * kS, 0) == 500);
  f->observe(5 * kS, 150);  // window (2, 5]: 500 at t=2 leaves
  CHECK(f->forecast(5 * kS, 0) == 200);
  CHECK(f->describe() == "window_max:3");
}

TEST_CASE("EWMA moves 1 - 1/e of the way to a step per time constant", "[manager][autoscale]") {
  auto f = make_forecaster("ewma:10");
  f->observe(1 * kS, 100);
  CHECK(f->forecast(1 * kS, 0) == 100);                   // the first observation sets the level
  for (int s = 2; s <= 11; ++s) f->observe(s * kS, 200);  // ten seconds of 200 = one time constant
  CHECK(f->forecast(11 * kS, 0) == Approx(200 - 100 * std::exp(-1.0)).epsilon(1e-9));
}

TEST_CASE("linear trend extrapolates a ramp over the lead time and never below the fit now", "[manager][autoscale]") {
  auto f = make_forecaster("trend:10");
  for (int s = 1; s <= 10; ++s) f->observe(s * kS, 100.0 + 10.0 * s);  // +10 QPS per second
  CHECK(f->forecast(10 * kS, 0) == Approx(200));
  CHECK(f->forecast(10 * kS, 5 * kS) == Approx(250));
  auto down = make_forecaster("trend:10");
  for (int s = 1; s <= 10; ++s) down->observe(s * kS, 300.0 - 10.0 * s);
  CHECK(down->forecast(10 * kS, 5 * kS) == Approx(200));  // a falling ramp: the fit now, not its future
}

TEST_CASE("current rate is the mean of its window", "[manager][autoscale]") {
  auto f = make_forecaster("current:2");
  f->observe(1 * kS, 100);
  f->observe(2 * kS, 200);
  f->observe(3 * kS, 400);
  CHECK(f->forecast(3 * kS, 30 * kS) == Approx(300));
}

TEST_CASE("forecast specs that do not parse name the text", "[manager][autoscale]") {
  for (const char* bad : {"window_max", "window_max:0", "ewma:-1", "trend:x", "median:5", "ewma:1e9"})
    CHECK_THROWS_WITH(make_forecaster(bad), Catch::Contains(std::string("forecast '") + bad + "'"));
}

TEST_CASE("the envelope trips on the window whose rate passes capacity times its tolerance", "[manager][autoscale]") {
  ArrivalEnvelope env({{1 * kS, 1.5}, {5 * kS, 1.0}});
  // 5 s at 100 QPS, then 1 s at 140: the 1 s window (140) is under 100 * 1.5,
  // the 5 s window (108) is over 100 * 1.0.
  for (int s = 0; s < 6; ++s) {
    const int n = s < 5 ? 100 : 140;
    for (int i = 0; i < n; ++i) env.record_arrival(s * kS + i * kS / n);
  }
  CHECK(env.rate_qps(6 * kS, 1 * kS) == Approx(140));
  CHECK(env.rate_qps(6 * kS, 5 * kS) == Approx(108));
  const auto c = env.check(6 * kS, 100);
  CHECK(c.tripped);
  CHECK(c.window_us == 5 * kS);
  CHECK(c.rate_qps == Approx(108));
  CHECK_FALSE(env.check(6 * kS, 110).tripped);  // 108 <= 110 and 140 <= 165
  // A burst of 200 in the last second trips the short window at capacity 110.
  for (int i = 0; i < 200; ++i) env.record_arrival(6 * kS + i * kS / 200);
  const auto b = env.check(7 * kS, 110);
  CHECK(b.tripped);
  CHECK(b.window_us == 1 * kS);
  CHECK(b.rate_qps == Approx(200));
}

TEST_CASE("an envelope window longer than the time observed is not checked", "[manager][autoscale]") {
  ArrivalEnvelope env({{30 * kS, 1.0}});
  for (int i = 0; i < 500; ++i) env.record_arrival(i * kS / 100);  // 5 s at 100 QPS
  CHECK_FALSE(env.check(5 * kS, 1).tripped);
  CHECK(parse_envelope("1:1.25,5:1.1,30:1").size() == 3);
  CHECK_THROWS_WITH(parse_envelope("1:1.25,5"), Catch::Contains("envelope '1:1.25,5'"));
  CHECK_THROWS_WITH(parse_envelope("0:1"), Catch::Contains("window '0'"));
}

TEST_CASE("capacity table: the highest load every policy up to which meets the target, per worker count",
          "[manager][autoscale]") {
  const CapacityTable t(lull::test::autoscale_library(), CapacityTarget{0.01, 0});
  REQUIRE(t.rows().size() == 5);
  CHECK(t.rows()[0].workers == 2);
  CHECK(t.rows()[0].capacity_qps == 200);
  CHECK(t.rows()[4].capacity_qps == 1000);
  CHECK(t.workers_for(350) == 4);
  CHECK(t.workers_for(400) == 4);
  CHECK(t.workers_for(401) == 6);
  bool enough = true;
  CHECK(t.workers_for(1100, &enough) == 10);  // 10 workers carry 1000: not enough, the largest count
  CHECK_FALSE(enough);
  CHECK(t.capacity_qps(5) == 400);  // 5 workers run the 4-worker policies
  CHECK(t.capacity_qps(1) == 0);
  CHECK(t.step_below(6) == 4);
  CHECK(t.step_below(7) == 6);
  CHECK(t.step_below(2) == 0);
  const CapacityTable floor(lull::test::autoscale_library(), CapacityTarget{0.01, 0.75});
  CHECK(floor.capacity_qps(4) == 200);  // accuracy 0.8 only up to 50 QPS per worker
  CHECK(floor.workers_for(350) == 8);
  CHECK_THROWS_WITH(CapacityTable(lull::test::autoscale_library(), CapacityTarget{1.5, 0}),
                    Catch::Contains("violation target"));
}

TEST_CASE("capacity table: above the grid's top, the load per worker of the first count to reach it carries on",
          "[manager][autoscale]") {
  // Every policy of 10 and 12 workers qualifies up to the grid's top, 1200
  // QPS: their capacities are lower bounds. 1500 QPS at 10 workers' 1200 is
  // 12.5 workers: the next compiled count, 16.
  auto lib = lull::test::autoscale_library();
  for (int k : {12, 16}) {
    auto t = lib.back();
    t.workers = k;
    for (auto& p : t.policies) p.expected_violation_rate = 0.001;
    lib.push_back(t);
  }
  for (auto& p : lib[4].policies) p.expected_violation_rate = 0.001;  // 10 workers: all loads qualify
  const CapacityTable t(lib, CapacityTarget{0.01, 0});
  CHECK(t.rows()[4].at_grid_top);
  CHECK_FALSE(t.rows()[3].at_grid_top);
  bool enough = false;
  CHECK(t.workers_for(1500, &enough) == 16);
  CHECK(enough);
  CHECK(t.workers_for(1200) == 10);
  CHECK(t.workers_for(2000, &enough) == 16);  // 16.7 workers: beyond the largest count
  CHECK_FALSE(enough);
}
