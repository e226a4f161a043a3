// Sliding-window load estimate and the policy switcher's grid rule.
#include <catch2/catch.hpp>

#include "runtime/core/load_monitor.h"
#include "runtime/core/policy_switcher.h"

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
