// Model variants while serving: which variant serves a load (hysteresis), a
// subset's policies restated over the full model list, and a switch through
// a real ServeSession (fake backend, fake management API): the policy stops
// using a model before it is unloaded, the unload waits for the batch in
// flight on it, a model is loaded before any batch goes to it, and a model
// that fails to load keeps the old set in use with the reason in the log and
// /metrics.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/manager/model_variants.h"
#include "runtime/pools/session_policy_swap.h"
#include "runtime/manager/variant_switcher.h"
#include "test/support/session_fakes.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::core::PolicyTable;
using lull::serve::testing::Rig;

namespace {

// small (0), mid (1), big (2). The full set's policy: a queue of 1 -> big,
// else small. The small variant {small, mid}: a queue of 1 -> mid.
PolicyTable full_table() {
  PolicyTable t = lull::serve::testing::tiny_session_table(1);
  t.models = {{"small", 0.6, {5e3, 6e3, 7e3, 8e3}},
              {"mid", 0.65, {10e3, 11e3, 12e3, 13e3}},
              {"big", 0.7, {20e3, 22e3, 24e3, 26e3}}};
  t.policies[0].actions = {{2, 1}, {0, 1}};
  return t;
}
PolicyTable subset_table() {
  PolicyTable t = lull::serve::testing::tiny_session_table(1);
  t.models = {{"small", 0.6, {5e3, 6e3, 7e3, 8e3}}, {"mid", 0.65, {10e3, 11e3, 12e3, 13e3}}};
  t.policies[0].actions = {{1, 1}, {0, 1}};
  return t;
}

// The management API's fake: which models each worker holds; at each unload
// it checks that every batch sent so far on that model has been answered.
class FakeModels final : public ModelControl {
 public:
  FakeModels(lull::serve::testing::FakeBackend& backend, std::set<std::size_t>& finished)
      : backend_(backend), finished_(finished) {}
  void load(const std::string& worker, const std::string& model) override {
    calls.push_back("load " + model);
    if (broken.count(model))
      throw std::runtime_error("HTTP 500 InternalServerException: Failed to load model " + model);
    held[worker].insert(model);
  }
  void unload(const std::string& worker, const std::string& model) override {
    calls.push_back("unload " + model);
    for (std::size_t i = 0; i < backend_.started.size(); ++i)
      if (names.at(backend_.started[i].model) == model && !finished_.count(i)) unanswered_at_unload++;
    held[worker].erase(model);
  }
  std::vector<std::string> names = {"small", "mid", "big"};
  std::map<std::string, std::set<std::string>> held = {{"w0", {"small", "mid", "big"}}};
  std::vector<std::string> calls;
  std::set<std::string> broken;
  int unanswered_at_unload = 0;

 private:
  lull::serve::testing::FakeBackend& backend_;
  std::set<std::size_t>& finished_;
};

std::vector<ModelVariant> variants(const PolicyTable& full) {
  return {{"full", 0, {full}, model_names(full)},
          {"small-set", 100, {widen_policy_table(subset_table(), full, "subset")}, {"small", "mid"}}};
}

}  // namespace

TEST_CASE("variants: the load chooses the variant, with hysteresis going back down", "[manager][variants]") {
  const std::vector<double> from = {0, 100, 200};
  CHECK(choose_variant(from, 0, 50, 0.1) == 0);
  CHECK(choose_variant(from, 0, 100, 0.1) == 1);
  CHECK(choose_variant(from, 0, 250, 0.1) == 2);
  CHECK(choose_variant(from, 2, 190, 0.1) == 2);  // within 10% below 200: stays
  CHECK(choose_variant(from, 2, 170, 0.1) == 1);
  CHECK(choose_variant(from, 1, 95, 0.1) == 1);
  CHECK(choose_variant(from, 1, 80, 0.1) == 0);
}

TEST_CASE("variants: a subset's policies restated over the full model list", "[manager][variants]") {
  const PolicyTable full = full_table();
  const PolicyTable wide = widen_policy_table(subset_table(), full, "subset.pb");
  REQUIRE(wide.models.size() == 3);
  CHECK(wide.models[2].name == "big");
  CHECK(wide.policies[0].actions[0].model == 1);  // mid, id 1 in both
  PolicyTable other = subset_table();
  other.models[1].name = "huge";
  CHECK_THROWS_WITH(widen_policy_table(other, full, "subset.pb"), Catch::Contains("subset.pb: model 'huge'"));
  PolicyTable no_fallback = subset_table();
  std::swap(no_fallback.models[0], no_fallback.models[1]);
  CHECK_THROWS_WITH(widen_policy_table(no_fallback, full, "subset.pb"), Catch::Contains("full set's model 0"));
}

TEST_CASE("variants: switch to the small set and back under load, make-before-break", "[manager][variants]") {
  Rig rig(full_table(), {});
  std::set<std::size_t> finished;
  const auto finish = [&](std::size_t i) {
    finished.insert(i);
    rig.backend.succeed(i, {"ok"});
  };
  FakeModels models(rig.backend, finished);
  SessionPolicySwap swap(*rig.session, 10000);
  std::vector<std::string> log;
  VariantSwitcher switcher(variants(full_table()), {"w0"}, models, swap,
                           [&](const std::string& l) { log.push_back(l); }, {0.1, 1'000'000});

  auto q0 = rig.session->submit("a");
  REQUIRE(rig.backend.started.size() == 1);
  CHECK(rig.backend.started[0].model == 2);  // big, in flight
  // High load: the small set. The swap waits for big's batch before unloading it.
  auto switching = std::async(std::launch::async, [&] { return switcher.step(150, 0); });
  CHECK(switching.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
  CHECK(models.calls.empty());  // nothing unloaded while big's batch is in flight
  finish(0);
  REQUIRE(switching.get());
  CHECK(models.calls == std::vector<std::string>{"unload big"});
  CHECK(models.unanswered_at_unload == 0);
  CHECK(q0.get().http_status == 200);
  CHECK(switcher.current() == 1);
  // Queries now go to mid, never big.
  auto q1 = rig.session->submit("b");
  REQUIRE(rig.backend.started.size() == 2);
  CHECK(rig.backend.started[1].model == 1);
  finish(1);
  CHECK(q1.get().http_status == 200);
  CHECK(models.held["w0"] == std::set<std::string>{"small", "mid"});
  // Within the dwell time nothing changes; after it, low load: big is loaded, then used.
  CHECK_FALSE(switcher.step(10, 500'000));
  REQUIRE(switcher.step(10, 2'000'000));
  CHECK(models.calls.back() == "load big");
  auto q2 = rig.session->submit("c");
  REQUIRE(rig.backend.started.size() == 3);
  CHECK(rig.backend.started[2].model == 2);
  finish(2);
  CHECK(q2.get().http_status == 200);
  CHECK(models.held["w0"] == std::set<std::string>{"small", "mid", "big"});
  REQUIRE(log.size() == 2);
  CHECK(log[0].find("full -> small-set") != std::string::npos);
  CHECK(log[0].find("unloaded big") != std::string::npos);
  CHECK(log[1].find("loaded big") != std::string::npos);
  const std::string m = switcher.metrics_text();
  CHECK(m.find("lull_variant_switches_total 2") != std::string::npos);
  CHECK(m.find("lull_worker_models_loaded{worker=\"w0\"} 3") != std::string::npos);
}

TEST_CASE("variants: a model that fails to load keeps the old set, reason logged and in /metrics",
          "[manager][variants]") {
  Rig rig(full_table(), {});
  std::set<std::size_t> finished;
  FakeModels models(rig.backend, finished);
  SessionPolicySwap swap(*rig.session, 10000);
  std::vector<std::string> log;
  VariantSwitcher switcher(variants(full_table()), {"w0"}, models, swap,
                           [&](const std::string& l) { log.push_back(l); }, {0.1, 0});
  REQUIRE(switcher.step(150, 0));  // to the small set: big unloaded
  models.broken.insert("big");
  CHECK_FALSE(switcher.step(10, 1));  // back to the full set: big fails to load
  CHECK(switcher.current() == 1);
  REQUIRE(log.size() == 2);
  CHECK(log[1].find("failed, keeping small-set") != std::string::npos);
  CHECK(log[1].find("Failed to load model big") != std::string::npos);
  const std::string m = switcher.metrics_text();
  CHECK(m.find("lull_variant_switch_failures_total 1") != std::string::npos);
  CHECK(m.find("Failed to load model big") != std::string::npos);
  CHECK(m.find("lull_worker_models_loaded{worker=\"w0\"} 2") != std::string::npos);
  // Queries still go to mid: the small set's policies stay in use.
  auto q = rig.session->submit("a");
  REQUIRE(rig.backend.started.size() == 1);
  CHECK(rig.backend.started[0].model == 1);
  finished.insert(0);
  rig.backend.succeed(0, {"ok"});
  CHECK(q.get().http_status == 200);
}
