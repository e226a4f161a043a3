// Model variants under an autoscaler (docs/operators-guide.md, "Variants and
// autoscaling"): the switcher asks for the workers up at each step; a worker
// that joined (holding the full set, as its pool's model check made sure) is
// trimmed to what the workers already there hold, never while a switch runs;
// a worker that joins during a switch keeps the full set until the next
// step; a worker gone is forgotten; a worker whose trim failed keeps the
// model and is not asked to register it again. A variant is a library: the switch swaps
// every worker count at once (through a real ServeSession: the policy for
// each count of workers up uses the variant's models), and the autoscaler's
// capacity table follows the variant.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "test/support/autoscale_test_support.h"
#include "runtime/manager/autoscaler.h"
#include "runtime/manager/model_variants.h"
#include "runtime/pools/session_policy_swap.h"
#include "runtime/manager/variant_switcher.h"
#include "test/support/session_fakes.h"

using namespace lull::manager;
using lull::core::PolicyTable;

namespace {

// small (0), mid (1), big (2) for `workers`; a queue of 1 -> `first`, else small.
PolicyTable table(int workers, std::vector<std::string> names, int first) {
  PolicyTable t = lull::serve::testing::tiny_session_table(workers);
  const std::map<std::string, lull::core::ModelInfo> all = {{"small", {"small", 0.6, {5e3, 6e3, 7e3, 8e3}}},
                                                            {"mid", {"mid", 0.65, {10e3, 11e3, 12e3, 13e3}}},
                                                            {"big", {"big", 0.7, {20e3, 22e3, 24e3, 26e3}}}};
  t.models.clear();
  for (const auto& n : names) t.models.push_back(all.at(n));
  t.policies[0].actions = {{static_cast<std::uint16_t>(first), 1}, {0, 1}};
  return t;
}
const std::vector<std::string> kFull = {"small", "mid", "big"}, kSmall = {"small", "mid"};

// A library of counts 1 and 2 per variant.
std::vector<ModelVariant> library_variants() {
  const std::vector<PolicyTable> full = {table(1, kFull, 2), table(2, kFull, 2)};
  const std::vector<PolicyTable> small = {table(1, kSmall, 1), table(2, kSmall, 1)};
  return {{"full", 0, full, kFull}, {"small-set", 100, widen_policy_library(small, full, "small"), kSmall}};
}

// The management API's fake: what each worker holds, every call in order;
// `during_unload` runs inside each unload (a worker joining mid-switch).
class Models final : public ModelControl {
 public:
  void load(const std::string& worker, const std::string& model) override {
    calls.push_back("load " + model + " on " + worker);
    held[worker].insert(model);
  }
  void unload(const std::string& worker, const std::string& model) override {
    calls.push_back("unload " + model + " on " + worker);
    if (refuse_unload.count(worker)) throw std::runtime_error("HTTP 500 InternalServerException");
    held[worker].erase(model);
    if (during_unload) during_unload();
  }
  std::map<std::string, std::set<std::string>> held;
  std::vector<std::string> calls;
  std::function<void()> during_unload;
  std::set<std::string> refuse_unload;  // workers whose unloads fail
};

// The serving side's fake: records the worker counts of each swap.
class Swaps final : public PolicySwap {
 public:
  void swap(const std::vector<PolicyTable>& tables, const std::vector<int>&) override {
    std::vector<int> counts;
    for (const auto& t : tables) counts.push_back(t.workers);
    swapped.push_back(counts);
  }
  std::vector<std::vector<int>> swapped;
};

std::set<std::string> set_of(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// One worker, w0, up and holding the full set; the fakes the switcher
// drives, and the switcher (library variants, 1 s dwell) over them.
struct Pool {
  Pool() { models.held["w0"] = set_of(kFull); }
  Models models;
  Swaps swaps;
  std::vector<std::string> up = {"w0"};
  std::vector<std::string> log;
  VariantSwitcher switcher{library_variants(),
                           [this] { return up; },
                           models,
                           swaps,
                           [this](const std::string& l) { log.push_back(l); },
                           VariantSwitchOptions{0.1, 1'000'000}};
};

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

TEST_CASE("variants under autoscaling: a new worker is trimmed to what the others hold, a worker gone is forgotten",
          "[manager][variants][scaling]") {
  Pool pool;
  Models& models = pool.models;
  VariantSwitcher& switcher = pool.switcher;
  const std::vector<std::string>& log = pool.log;
  REQUIRE(switcher.step(150, 0));  // the small set: big unloaded from w0, both counts swapped at once
  CHECK(models.calls == std::vector<std::string>{"unload big on w0"});
  CHECK(pool.swaps.swapped == std::vector<std::vector<int>>{{1, 2}});

  // w1 joins with the full set (its pool checked every model of --policies).
  pool.up.push_back("w1");
  models.held["w1"] = set_of(kFull);
  CHECK_FALSE(switcher.step(150, 100'000));  // no switch (same variant), but the trim
  CHECK(models.calls.back() == "unload big on w1");
  CHECK(models.held["w1"] == set_of(kSmall));
  CHECK(log.back().find("new worker w1 joined with the full set; unloaded big") != std::string::npos);
  CHECK(switcher.metrics_text().find("lull_worker_models_loaded{worker=\"w1\"} 2") != std::string::npos);

  // Back to the full set: big is loaded on both workers before the swap.
  REQUIRE(switcher.step(10, 2'000'000));
  CHECK(contains(models.calls, "load big on w0"));
  CHECK(contains(models.calls, "load big on w1"));
  CHECK(models.held["w0"] == set_of(kFull));
  CHECK(models.held["w1"] == set_of(kFull));

  // w0 is drained away; w2 joins while the full set is in use: nothing to trim.
  pool.up = {"w1", "w2"};
  models.held["w2"] = set_of(kFull);
  const std::size_t calls = models.calls.size();
  CHECK_FALSE(switcher.step(10, 2'100'000));
  CHECK(models.calls.size() == calls);
  const std::string m = switcher.metrics_text();
  CHECK(m.find("worker=\"w0\"") == std::string::npos);
  CHECK(m.find("lull_worker_models_loaded{worker=\"w2\"} 3") != std::string::npos);
}

TEST_CASE("variants under autoscaling: a worker joining during a switch keeps the full set until the next step",
          "[manager][variants][scaling]") {
  Pool pool;
  Models& models = pool.models;
  // While big is unloaded from w0 (after the swap), w1 comes up holding every model.
  models.during_unload = [&] {
    if (contains(pool.up, "w1")) return;
    pool.up.push_back("w1");
    models.held["w1"] = set_of(kFull);
  };
  VariantSwitcher& switcher = pool.switcher;
  REQUIRE(switcher.step(150, 0));
  // The switch worked on the workers it started with: w1 was not touched.
  CHECK(models.calls == std::vector<std::string>{"unload big on w0"});
  CHECK(models.held["w1"] == set_of(kFull));  // a superset of the small set: safe to route to
  models.during_unload = nullptr;
  CHECK_FALSE(switcher.step(150, 100'000));
  CHECK(models.calls.back() == "unload big on w1");
  CHECK(models.held["w1"] == set_of(kSmall));
}

TEST_CASE(
    "variants under autoscaling: a new worker whose trim fails keeps the model, and is not asked to load it again",
    "[manager][variants][scaling]") {
  Pool pool;
  Models& models = pool.models;
  VariantSwitcher& switcher = pool.switcher;
  const std::vector<std::string>& log = pool.log;
  REQUIRE(switcher.step(150, 0));
  pool.up.push_back("w1");
  models.held["w1"] = set_of(kFull);
  models.refuse_unload.insert("w1");
  CHECK_FALSE(switcher.step(150, 100'000));
  CHECK(models.held["w1"] == set_of(kFull));
  CHECK(log.back().find("could not unload big") != std::string::npos);
  // Back to the full set: big is loaded where it is missing only (a second
  // registration would be refused), and the switch goes through.
  REQUIRE(switcher.step(10, 2'000'000));
  CHECK(contains(models.calls, "load big on w0"));
  CHECK_FALSE(contains(models.calls, "load big on w1"));
  CHECK(switcher.current() == 0);
}

TEST_CASE("variants under autoscaling: a library swap replaces every worker count's policies at once",
          "[manager][variants][scaling]") {
  const auto variants = library_variants();
  lull::session::ServeOptions options;
  options.library = variants[0].tables;
  lull::serve::testing::Rig rig(variants[0].tables[1], options);  // 2 workers up
  const auto first_model = [&](std::size_t i) { return rig.backend.started.at(i).model; };
  auto q0 = rig.session->submit("a");
  REQUIRE(rig.backend.started.size() == 1);
  CHECK(first_model(0) == 2);  // big, the full set's policy for 2 workers
  rig.backend.succeed(0, {"ok"});
  CHECK(q0.get().http_status == 200);
  rig.session->swap_policies_and_wait(variants[1].tables, {2}, 1000);
  auto q1 = rig.session->submit("b");
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(first_model(1) == 1);  // mid: the small set's policy for 2 workers
  rig.backend.succeed(1, {"ok"});
  CHECK(q1.get().http_status == 200);
  // One worker left: the 1-worker table, replaced too.
  rig.health.set(1, false);
  auto q2 = rig.session->submit("c");
  REQUIRE(rig.backend.started.size() == 3);
  CHECK(rig.backend.started[2].worker == 0);
  CHECK(first_model(2) == 1);
  rig.backend.succeed(2, {"ok"});
  CHECK(q2.get().http_status == 200);
}

TEST_CASE("variants under autoscaling: a variant's library must cover the full set's worker counts",
          "[manager][variants][scaling]") {
  const std::vector<PolicyTable> full = {table(1, kFull, 2), table(2, kFull, 2)};
  CHECK_THROWS_WITH(widen_policy_library({table(1, kSmall, 1)}, full, "v1.pb"),
                    Catch::Contains("v1.pb: worker counts 1 differ from the full set's (1,2)"));
  CHECK_THROWS_WITH(widen_policy_library({table(1, kSmall, 1), table(3, kSmall, 1)}, full, "v1.pb"),
                    Catch::Contains("worker counts 1,3"));
  const auto wide = widen_policy_library({table(1, kSmall, 1), table(2, kSmall, 1)}, full, "v1.pb");
  REQUIRE(wide.size() == 2);
  CHECK(wide[1].workers == 2);
  CHECK(wide[1].models.size() == 3);
  CHECK(wide[1].policies[0].actions[0].model == 1);
}

TEST_CASE("variants under autoscaling: the autoscaler's capacity table follows the variant",
          "[manager][autoscaler][scaling]") {
  // The full set: 100 QPS a worker (autoscale_test_support.h). A variant
  // whose policies meet the target up to 200 QPS a worker.
  const auto full = lull::test::autoscale_library();
  auto fast = full;
  for (auto& t : fast)
    for (auto& p : t.policies) p.expected_violation_rate = p.load_qps <= 200 * t.workers ? 0.002 : 0.03;
  AutoscaleOptions o;
  o.forecast = "window_max:1";
  o.lead_us = 0;
  Autoscaler scaler(CapacityTable(full, {0.01, 0}), o, 0);
  for (int i = 0; i < 500; ++i) scaler.record_arrival(i * 2'000);  // 500 QPS over the first second
  CHECK(scaler.decide(1'000'000, {2, 0, 0}).need == 6);
  scaler.set_capacity(CapacityTable(fast, {0.01, 0}));
  for (int i = 0; i < 500; ++i) scaler.record_arrival(1'000'000 + i * 2'000);
  CHECK(scaler.decide(2'000'000, {2, 0, 0}).need == 4);  // 500 / 200 -> 3 workers, the next compiled count: 4
  std::vector<PolicyTable> other(full.begin(), full.begin() + 2);
  CHECK_THROWS_WITH(scaler.set_capacity(CapacityTable(other, {0.01, 0})), Catch::Contains("other worker counts"));
}
