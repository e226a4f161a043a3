// `lull simulate --autoscale --variant-sets` in process: model variants in
// virtual time under the autoscaler. A stepped trace switches to the small
// variant (the fast model only) when the load rises (at once: it loads
// nothing) and back to the full set when it falls (after the model-load
// delay); no query is dispatched to a model outside the variant in use at
// its dispatch time; the autoscaler's capacity table follows the variant
// (fewer worker-seconds than the same run without variants); no query lost.
#include <catch2/catch.hpp>

#include <map>

#include "runtime/manager/model_variants.h"
#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"
#include "test/support/runtime_test_support.h"

namespace {

using lull::core::PolicyTable;

// tiny_scaling_library (10 QPS a worker at 1%), its actions picking the
// slow model but in the last (queue full) state.
std::vector<PolicyTable> full_library() {
  std::vector<PolicyTable> lib = lull::test::tiny_scaling_library();
  for (auto& t : lib)
    for (auto& p : t.policies)
      for (std::size_t a = 0; a + 1 < p.actions.size(); ++a) p.actions[a].model = 1;
  return lib;
}

// The small variant: the fast model alone (every action picks it), which
// carries 20 QPS per worker at 1%.
std::vector<PolicyTable> small_library() {
  std::vector<PolicyTable> lib = full_library();
  for (auto& t : lib) {
    t.models.resize(1);
    for (auto& p : t.policies)
      for (auto& a : p.actions) a.model = 0;
    t.policies[1].expected_violation_rate = 0.001;
  }
  return lib;
}

lull::sim::SimOptions options(bool with_variants) {
  lull::sim::SimOptions o;
  o.library = full_library();
  o.workers_up = 2;
  o.autoscale.enabled = true;
  o.autoscale.provisioning = "fixed:5";
  o.autoscale.options.forecast = "window_max:10";
  o.autoscale.options.lead_us = 5'000'000;
  o.autoscale.options.scale_in_holdoff_us = 20'000'000;
  if (with_variants) {
    const auto full = full_library();
    o.variants.variants = {
        {"full", 0, full, {"fast", "slow"}},
        {"small", 30, lull::manager::widen_policy_library(small_library(), full, "small"), {"fast"}}};
    o.variants.load = "current:5";
    o.variants.load_delay_us = 2'000'000;
    o.variants.dwell_us = 5'000'000;
  }
  return o;
}

// Counts the queries each model's batches carried, as the backend starts them.
class CountingLatency final : public lull::sim::LatencyModel {
 public:
  explicit CountingLatency(const PolicyTable& t) : inner_(t) {}
  std::int64_t batch_latency_us(int model, int batch) override {
    per_model[model] += static_cast<std::uint64_t>(batch);
    return inner_.batch_latency_us(model, batch);
  }
  std::map<int, std::uint64_t> per_model;

 private:
  lull::sim::CompiledLatency inner_;
};

lull::sim::SimResult run(const lull::sim::SimOptions& o, CountingLatency* latency) {
  // 15 QPS for 60 s, 50 QPS for 60 s, 15 QPS for 180 s, nearly regular gaps.
  lull::sim::RateArrivals arrivals({{0, 60, 15}, {60, 120, 50}, {120, 300, 15}}, lull::sim::ArrivalProcess::gamma(0.02),
                                   11);
  return lull::sim::simulate(o.library[0], arrivals, *latency, o);
}

}  // namespace

TEST_CASE("simulated variants: the small set at high load and back, make-before-break, capacity follows",
          "[sim][autoscale][variants]") {
  const auto full = full_library();  // the latency model reads the table: it must outlive the run
  CountingLatency latency(full[0]);
  const lull::sim::SimResult r = run(options(true), &latency);
  REQUIRE(r.variants);
  const auto& v = *r.variants;
  CHECK(r.completed == r.arrivals);
  REQUIRE(v.switches.size() == 2);
  // Up: once the 5 s mean passes 30 QPS (a few seconds into the step), at
  // once (the small set's model is loaded already).
  const auto& up = v.switches[0];
  CHECK(up.from == 0);
  CHECK(up.to == 1);
  CHECK(up.decided_s > 60);
  CHECK(up.decided_s < 66);
  CHECK(up.t_s == up.decided_s);
  CHECK(up.load_qps >= 30);
  // Down: below 27 QPS (the boundary less 10%) after the load falls, and in
  // use only the model-load delay later.
  const auto& down = v.switches[1];
  CHECK(down.from == 1);
  CHECK(down.to == 0);
  CHECK(down.decided_s > 120);
  CHECK(down.decided_s < 126);
  CHECK(down.load_qps < 27);
  CHECK(down.t_s == Approx(down.decided_s + 2));
  // No query went to the slow model while the small variant was in use, and
  // both variants served; the counts are every query the backend started.
  const std::size_t fast = 0, slow = 1;
  REQUIRE(v.queries_by_model.size() == 2);
  CHECK(v.queries_by_model[1][slow] == 0);
  CHECK(v.queries_by_model[1][fast] > 1000);
  CHECK(v.queries_by_model[0][slow] > 0);
  CHECK(v.queries_by_model[0][fast] + v.queries_by_model[1][fast] == latency.per_model[0]);
  CHECK(v.queries_by_model[0][slow] == latency.per_model[1]);
  CHECK(v.queries[0] + v.queries[1] == r.arrivals);
  // Worker-seconds still reported; the small set's capacity (20 QPS a
  // worker) needs fewer workers at the high load than the full set's 10.
  REQUIRE(r.autoscale);
  CountingLatency plain_latency(full[0]);
  const lull::sim::SimResult plain = run(options(false), &plain_latency);
  CHECK_FALSE(plain.variants);
  CHECK(r.worker_seconds > 0);
  CHECK(r.worker_seconds < plain.worker_seconds);
}

TEST_CASE("simulated variants: the dwell time holds a second switch back", "[sim][variants]") {
  lull::sim::SimOptions o = options(true);
  o.autoscale.enabled = false;
  o.workers_up = 8;
  o.library = {full_library().back()};
  o.variants.variants = {
      {"full", 0, o.library, {"fast", "slow"}},
      {"small", 30, lull::manager::widen_policy_library({small_library().back()}, o.library, "small"), {"fast"}}};
  o.variants.dwell_us = 100'000'000;  // longer than the step: no way back within it
  CountingLatency latency(o.library[0]);
  lull::sim::RateArrivals arrivals({{0, 60, 15}, {60, 120, 50}, {120, 200, 15}}, lull::sim::ArrivalProcess::gamma(0.02),
                                   11);
  const lull::sim::SimResult r = lull::sim::simulate(o.library[0], arrivals, latency, o);
  REQUIRE(r.variants);
  REQUIRE(r.variants->switches.size() == 2);
  CHECK(r.variants->switches[1].decided_s >= r.variants->switches[0].decided_s + 100);
  CHECK(r.variants->queries_by_model[1][1] == 0);
  CHECK(r.completed == r.arrivals);
}
