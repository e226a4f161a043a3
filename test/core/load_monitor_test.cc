// Sliding-window load estimate and the policy switcher's grid rule.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "runtime/core/load_monitor.h"
#include "runtime/core/policy_switcher.h"
#include "runtime/sim/arrivals.h"

using lull::core::LoadMonitor;
using lull::core::PolicySwitcher;

TEST_CASE("load monitor counts arrivals in the last window", "[runtime][load]") {
  LoadMonitor m(500'000);
  CHECK(m.estimate_qps(0) == 0);
  for (int i = 0; i < 100; ++i) m.record_arrival(i * 10'000);  // 100 QPS for 1 s
  CHECK(m.estimate_qps(990'000) == Approx(100.0));             // 50 arrivals in (490, 990] ms
  CHECK(m.estimate_qps(1'400'000) == Approx(18.0));            // 9 left: 910..990 ms
  CHECK(m.estimate_qps(2'000'000) == 0);
  LoadMonitor small(100'000);
  for (int i = 0; i < 10; ++i) small.record_arrival(1'000'000 + i * 1'000);
  CHECK(small.estimate_qps(1'009'000) == Approx(100.0));  // 10 arrivals / 0.1 s
  CHECK_THROWS(LoadMonitor(0));
}

TEST_CASE("a shard's load monitor counts the part of the gap the window starts in", "[runtime][load][shard]") {
  LoadMonitor shard(500'000, lull::core::BurstinessEstimator::kDefaultWindow, 4);
  shard.record_arrival(100'000);
  CHECK(shard.estimate_qps(100'000) == Approx(1.0));  // no arrival has left yet: half a gap, (0 + 1/2) / 0.5 s
  for (std::int64_t t = 200'000; t <= 700'000; t += 100'000) shard.record_arrival(t);
  // (200, 700] holds 300..700 ms: 4 gaps, and 100 of the 100 ms gap from 200 to 300.
  CHECK(shard.estimate_qps(700'000) == Approx(10.0));  // (4 + 1) / 0.5 s, as 5 arrivals unsharded
  shard.record_arrival(760'000);
  // (260, 760] holds 300..760: 5 gaps and 40 of the 100 ms from 200 to 300.
  CHECK(shard.estimate_qps(760'000) == Approx((5 + 0.4) / 0.5));
  CHECK(shard.estimate_qps(2'000'000) == 0);
  LoadMonitor plain(500'000);  // G = 1: the count
  for (std::int64_t t = 100'000; t <= 760'000; t += 100'000) plain.record_arrival(t);
  plain.record_arrival(760'000);
  CHECK(plain.estimate_qps(760'000) == Approx(6 / 0.5));
}

// One lull against G shards behind a round-robin balancer, on one Poisson
// stream: at every arrival, how often the estimate (the shard's times G) is
// above a compiled load, the switch from that load's policy to the next. The
// shard's plain count (G*k) is above some 2 % more often; its rule matches.
TEST_CASE("a shard's load estimate crosses each compiled load as one lull's does", "[runtime][load][shard]") {
  constexpr int kShards = 8;
  constexpr std::int64_t kWindowUs = 500'000;
  lull::sim::RateArrivals source({{0, 60, 3300}}, lull::ArrivalProcess::poisson(), 11);
  LoadMonitor one(kWindowUs);
  std::vector<LoadMonitor> shards;
  std::vector<std::vector<std::int64_t>> counted(kShards);  // the plain count's window, per shard
  for (int g = 0; g < kShards; ++g)
    shards.emplace_back(kWindowUs, lull::core::BurstinessEstimator::kDefaultWindow, kShards);
  const std::vector<double> loads{3300, 3400, 3500};
  std::vector<long> above_one(loads.size()), above_shard(loads.size()), above_count(loads.size());
  long n = 0;
  std::int64_t t = 0;
  for (int i = 0; source.next(&t); ++i, ++n) {
    one.record_arrival(t);
    const double e1 = one.estimate_qps(t);
    LoadMonitor& mine = shards[static_cast<std::size_t>(i % kShards)];
    mine.record_arrival(t);
    const double es = kShards * mine.estimate_qps(t);
    auto& window = counted[static_cast<std::size_t>(i % kShards)];
    window.push_back(t);
    std::size_t first = 0;
    while (window[first] <= t - kWindowUs) ++first;
    window.erase(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(first));
    const double ec = kShards * static_cast<double>(window.size()) * 1e6 / kWindowUs;
    for (std::size_t j = 0; j < loads.size(); ++j) {
      above_one[j] += e1 > loads[j];
      above_shard[j] += es > loads[j];
      above_count[j] += ec > loads[j];
    }
  }
  REQUIRE(n > 190'000);
  for (std::size_t j = 0; j < loads.size(); ++j) {
    INFO("compiled load " << loads[j]);
    const double one_p = static_cast<double>(above_one[j]) / static_cast<double>(n);
    CHECK(static_cast<double>(above_shard[j]) / static_cast<double>(n) == Approx(one_p).margin(0.002));
    if (j < 2) CHECK(static_cast<double>(above_count[j]) / static_cast<double>(n) > one_p + 0.01);
  }
}

TEST_CASE("switcher uses the lowest compiled load at or above the estimate", "[runtime][load]") {
  PolicySwitcher s({200, 400, 600});
  int events = 0;
  double seen = 0;
  s.on_new_policy_needed([&](const lull::core::NewPolicyNeeded& e) {
    ++events;
    seen = e.estimated_qps;
  });
  CHECK(s.update(0, 0) == 0);
  CHECK(s.update(200, 0) == 0);
  CHECK(s.update(201, 0) == 1);
  bool changed = false;
  CHECK(s.update(400, 0, &changed) == 1);
  CHECK_FALSE(changed);
  CHECK(s.update(599, 0, &changed) == 2);
  CHECK(changed);
  CHECK(events == 0);
  CHECK(s.update(601, 5, &changed) == 2);
  CHECK(events == 1);
  CHECK(seen == 601);
  s.update(900, 6);
  CHECK(events == 1);  // raised once per excursion above the grid
  s.update(100, 7);
  s.update(700, 8);
  CHECK(events == 2);
  CHECK(s.events_raised() == 2);
}
