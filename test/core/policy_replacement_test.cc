// Replacing policies in place (--recompile-on-drift): the catalog's replace()
// and the Dispatcher's inbox replacement on the tiny hand-made table. A
// replaced policy is the one chosen afterwards, the models' latencies follow
// it, a reader holding the old policy still reads the old table, and mail the
// catalog refuses is dropped without failing an arrival.
#include <catch2/catch.hpp>

#include <vector>

#include "runtime/core/dispatcher.h"
#include "runtime/core/policy_catalog.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::core;

// The tiny table as if recompiled from latencies ten times the profile's:
// every state serves one query on model 1, and the expectations are tagged.
PolicyTable recompiled(const PolicyTable& served) {
  PolicyTable t = served;
  for (auto& m : t.models)
    for (double& l : m.latency_us) l *= 10;
  for (auto& p : t.policies) {
    for (auto& a : p.actions) a = Action{1, 1};
    p.expected_accuracy = 0.123;
    p.expected_violation_rate = 0.456;
  }
  return t;
}

// The actions as (model, batch) numbers, comparable.
std::vector<int> codes(const CompiledPolicy& p) {
  std::vector<int> out;
  for (const Action& a : p.actions) out.push_back(a.model * 65536 + a.batch);
  return out;
}

class RecordingBackend final : public Backend {
 public:
  void start_batch(const BatchRequest& b) override { started.push_back(b); }
  std::vector<BatchRequest> started;
};

}  // namespace

TEST_CASE("catalog replace: the new policies are chosen, the old ones stay alive and unchanged", "[online][replace]") {
  PolicyTable four = lull::test::tiny_table();
  four.workers = 4;
  PolicyCatalog c({lull::test::tiny_table(), four});  // 2 and 4 workers
  const PolicyChoice old = c.choose(2, 150, true);
  const std::vector<int> old_actions = codes(*old.policy);
  const CompiledPolicy* old_four = c.choose(4, 150, true).policy;
  REQUIRE(old.policy->expected_accuracy == Approx(0.7));
  CHECK(c.generation() == 0);

  c.replace(recompiled(lull::test::tiny_table()));
  CHECK(c.generation() == 1);
  const PolicyChoice now = c.choose(2, 150, true);
  CHECK(now.policy != old.policy);
  CHECK(now.id != old.id);
  CHECK(now.policy->load_qps == 200);
  CHECK(now.policy->expected_accuracy == Approx(0.123));
  CHECK(now.policy->actions.front().model == 1);
  CHECK(c.choose(2, 50, true).policy->expected_accuracy == Approx(0.123));
  // The reader holding the old policy: same object, same table.
  CHECK(c.entry(old.id).policy == old.policy);
  CHECK(codes(*old.policy) == old_actions);
  CHECK(old.policy->expected_accuracy == Approx(0.7));
  // The models' latencies follow the replacement; other worker counts keep theirs.
  CHECK(c.header().models[1].latency_us[0] == Approx(400'000));
  CHECK(c.choose(4, 150, true).policy == old_four);
  CHECK(c.wanted(2, 150).workers == 0);  // the grid loads are held again

  // A set whose models come in another order (drift reordered the fastest)
  // or for another SLO is refused, and nothing changes.
  PolicyTable swapped = recompiled(lull::test::tiny_table());
  std::swap(swapped.models[0], swapped.models[1]);
  CHECK_THROWS_AS(c.replace(swapped), std::invalid_argument);
  PolicyTable other_slo = recompiled(lull::test::tiny_table());
  other_slo.slo_us += 1000;
  CHECK_THROWS_AS(c.replace(other_slo), std::invalid_argument);
  CHECK(c.generation() == 1);
  CHECK(c.choose(2, 150, true).policy == now.policy);
}

TEST_CASE("dispatcher: a replacement posted to the inbox serves from the next arrival on",
          "[online][replace][dispatcher]") {
  const PolicyTable table = lull::test::tiny_table();  // 2 workers, SLO 150 ms
  VirtualClock clock;
  RecordingBackend backend;
  Dispatcher d(table, clock, backend);
  d.on_arrival(0);  // full slack: state (1, 2) -> model 0, batch 1
  REQUIRE(backend.started.size() == 1);
  CHECK(backend.started[0].model == 0);
  CHECK(d.busy_remaining_us(0) == 10'000);  // the profile's lat(fast, 1)

  // Mail the catalog refuses is dropped and counted; the arrival goes on.
  PolicyTable bad = recompiled(table);
  bad.task = "other";
  d.policy_inbox().post_replacement(bad);
  d.policy_inbox().post_replacement(recompiled(table));
  CHECK(d.current_choice().policy->expected_accuracy == Approx(0.7));  // not before an arrival
  d.on_arrival(1);                                                     // to idle worker 1, under the replacement
  REQUIRE(backend.started.size() == 2);
  CHECK(backend.started[1].worker == 1);
  CHECK(backend.started[1].model == 1);
  CHECK(d.busy_remaining_us(1) == 400'000);  // the replacement's lat(slow, 1)
  CHECK(d.current_choice().policy->expected_accuracy == Approx(0.123));
  CHECK(d.catalog().generation() == 1);
  CHECK(d.mail_rejected() == 1);
  CHECK(d.last_mail_error().find("task") != std::string::npos);
}
