// The planner (`lull plan --arrivals tracked:FILE`) and the autoscaler
// (`--autoscale-rule envelope`) size a fleet by one rule (schema/count_rule.h):
// the fewest count whose expectation over the load estimates it must carry
// meets the target. Why these checks: for the same library and the same
// arrivals, the planner's functions (served_load_shares, served_mixture and
// the shared search, as plan_tracked calls them) and the autoscaler's
// decision must name the same count; and each envelope below is built so that
// a rule over its mean (the capacity table's count for the mean estimate) or
// over its peak names another count, so either side drifting to one of those
// fails here.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "compiler/arrival_fit.h"
#include "runtime/manager/autoscaler.h"
#include "runtime/manager/capacity_table.h"
#include "schema/count_rule.h"

namespace {

// Counts 1..6, loads 20..400 QPS by 20: k workers expect violation 0.001 up
// to 60 k QPS, 0.05 up to 90 k, 0.5 above; accuracy 0.8.
double violation(int k, double load) { return load <= 60 * k ? 0.001 : load <= 90 * k ? 0.05 : 0.5; }

std::vector<lull::core::PolicyTable> library() {
  std::vector<lull::core::PolicyTable> lib;
  for (int k = 1; k <= 6; ++k) {
    lull::core::PolicyTable t;
    t.task = "test";
    t.slo_us = 150'000;
    t.workers = k;
    t.models = {lull::core::ModelInfo{"m", 0.8, {10'000}}};
    for (int load = 20; load <= 400; load += 20) {
      lull::core::CompiledPolicy p;
      p.load_qps = load;
      p.expected_violation_rate = violation(k, load);
      p.expected_accuracy = 0.8;
      t.policies.push_back(p);
    }
    lib.push_back(t);
  }
  return lib;
}

// Arrivals evenly spaced at `base` QPS over (start, end) microseconds, at
// `burst` QPS within (burst_from, burst_to).
std::vector<std::int64_t> arrivals(std::int64_t start, std::int64_t end, double base, std::int64_t burst_from,
                                   std::int64_t burst_to, double burst) {
  std::vector<std::int64_t> t;
  double now = static_cast<double>(start);
  while (true) {
    const bool in_burst = now >= static_cast<double>(burst_from) && now < static_cast<double>(burst_to);
    now += 1e6 / (in_burst ? burst : base);
    if (now >= static_cast<double>(end)) break;
    t.push_back(static_cast<std::int64_t>(now));
  }
  return t;
}

constexpr double kTarget = 0.01;

// The planner's count: plan_tracked's rule over per-count grids of the library.
int planner_count(const std::vector<std::int64_t>& t) {
  const auto shares = lull::compiler::served_load_shares(t);
  auto meets = [&](int k) {
    std::vector<lull::compiler::LoadExpectation> grid;
    for (int load = 20; load <= 400; load += 20) grid.push_back({double(load), 0.8, violation(k, load)});
    const auto m = lull::compiler::served_mixture(shares, grid);
    return lull::meets_count_target({m.load_qps, m.accuracy, m.violation}, kTarget, 0);
  };
  return lull::fewest_count_meeting(1, 6, meets);
}

// The autoscaler's need with the envelope rule (or not), the arrivals after
// 0.5 s recorded, deciding at 6 s with a 5 s lead: its envelope is all of them.
lull::manager::ScaleDecision autoscaler_decision(const std::vector<std::int64_t>& t, bool envelope_rule) {
  lull::manager::AutoscaleOptions o;
  o.lead_us = 5'000'000;
  o.forecast = "current:1";
  o.envelope_rule = envelope_rule;
  lull::manager::Autoscaler a(lull::manager::CapacityTable(library(), {kTarget, 0}), o, 0);
  for (auto x : t) a.record_arrival(x);
  lull::manager::PoolCounts six;
  six.up = 6;  // capacity 360 QPS: the safety envelope never trips here
  return a.decide(6'000'000, six);
}

double mean_estimate(const std::vector<std::int64_t>& t) {
  double mean = 0;
  for (const auto& [load, share] : lull::compiler::served_load_shares(t)) mean += load * share;
  return mean;
}

double peak_estimate(const std::vector<std::int64_t>& t) { return lull::compiler::served_load_shares(t).back().first; }

}  // namespace

TEST_CASE("count rule: planner and autoscaler pick the same count, a long burst sets it above the mean's",
          "[plan][autoscale][count_rule]") {
  // 100 QPS with 300 QPS for 1.5 s of the 5.5: over a third of the arrivals see 300.
  const auto t = arrivals(500'000, 6'000'000, 100, 3'000'000, 4'500'000, 300);
  const int planned = planner_count(t);
  const auto d = autoscaler_decision(t, true);
  CHECK(planned == 5);  // 300 QPS needs 5 x 60; 4 workers expect 0.05 on a third of it
  CHECK(d.need == planned);
  const lull::manager::CapacityTable table(library(), {kTarget, 0});
  CHECK(table.fewest_workers_for(mean_estimate(t)) < planned);  // the mean's count would under-provision
}

TEST_CASE("count rule: planner and autoscaler pick the same count, a short burst sets it below the peak's",
          "[plan][autoscale][count_rule]") {
  // 100 QPS with 240 QPS for 0.15 s: its estimates are a few percent of the
  // arrivals, within what the target tolerates at 0.05.
  const auto t = arrivals(500'000, 6'000'000, 100, 3'000'000, 3'150'000, 240);
  const int planned = planner_count(t);
  CHECK(planned > 0);
  CHECK(autoscaler_decision(t, true).need == planned);
  const lull::manager::CapacityTable table(library(), {kTarget, 0});
  CHECK(table.fewest_workers_for(peak_estimate(t)) > planned);  // the peak's count would over-provision
  CHECK(table.fewest_workers_for(mean_estimate(t)) <= planned);
}

TEST_CASE("count rule: without the option the autoscaler keeps its forecast rule", "[plan][autoscale][count_rule]") {
  const auto t = arrivals(500'000, 6'000'000, 100, 3'000'000, 4'500'000, 300);
  // current:1 forecasts the last second's rate (100 QPS): 2 workers by the capacity table.
  const auto d = autoscaler_decision(t, false);
  const lull::manager::CapacityTable table(library(), {kTarget, 0});
  CHECK(d.need == table.fewest_workers_for(d.forecast_qps));
  CHECK(d.need < planner_count(t));
}

TEST_CASE("count rule: the shared search finds the fewest meeting count from any hint", "[plan][count_rule]") {
  for (int fewest = 1; fewest <= 9; ++fewest)
    for (int hint = -1; hint <= 12; ++hint)
      CHECK(lull::fewest_count_meeting(hint, 9, [&](int k) { return k >= fewest; }) == fewest);
  CHECK(lull::fewest_count_meeting(3, 9, [](int) { return false; }) == 0);
}
