// `lull serve --autoscale` below the command line: the ServingAutoscaler
// driving a LocalProcessPool of stand-in model servers under a real
// TorchServe backend and ServeSession. The autoscaler runs on a virtual
// clock (arrivals and ticks are fed by the test, so every decision is
// known); the processes, health checks and HTTP run for real, and each wait
// for them is bounded. Verdicts are states, counts and which worker answered
// each query, never a time: a load step scales out (new processes start and
// get queries only once up) and back in (drained workers get no new
// queries, their batch in flight finishes, the processes stop), with no
// query lost and no 5xx; a worker killed while it drains; a worker command
// that fails (scaling held with doubling backoff, serving goes on, the
// reason in the log and /metrics); a worker ejected for malformed answers
// (not counted up, so replaced; not stopped).
#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <set>
#include <thread>

#include "runtime/pools/local_process_pool.h"
#include "runtime/net/http_client.h"
#include "test/pools/serving_rig.h"

using namespace lull::manager;
using namespace lull::pools;
using lull::core::PolicyTable;
using lull::frontend::Answer;
using lull::manager::testing::wait_until;

namespace {

using lull::manager::testing::answered_by;
using lull::manager::testing::metric;

// The rig over a LocalProcessPool. `command`: the workers' command (empty:
// the stand-in server whose models take batch_ms per batch).
struct Rig : lull::manager::testing::ServingRig {
  explicit Rig(const std::string& command, int batch_ms = 300, lull::torchserve::OutlierOptions outlier = {})
      : ServingRig(
            [&](lull::net::HttpClient& client, const lull::core::Clock& clock, const std::string& dir,
                ServingAutoscalerOptions&) {
              LocalProcessPoolOptions po;
              po.command = command.empty() ? server_command(batch_ms) : command;
              po.models = {"small", "big"};
              po.log_dir = dir;
              po.stop_grace_ms = 2000;
              return std::unique_ptr<WorkerPool>(std::make_unique<LocalProcessPool>(client, clock, po));
            },
            outlier) {}
  LocalProcessPool& local() { return static_cast<LocalProcessPool&>(*pool); }
};

}  // namespace

TEST_CASE("serving autoscaler: a load step scales out and back in, no query lost", "[manager][serving]") {
  Rig rig("");
  REQUIRE(rig.scaler->start_initial(60'000'000) == 2);  // the floor: the library's smallest count
  REQUIRE(rig.session->healthy());

  // 3x load: 400 QPS needs 4 workers (100 each).
  const ScaleDecision out = rig.load(400, 0, 1);
  REQUIRE(out.action == ScaleDecision::Action::kScaleOut);
  CHECK(out.count == 2);
  CHECK(out.need == 4);
  CHECK(rig.joined_log().find("scale_out +2") != std::string::npos);
  // The new workers take no query while starting: everything goes to slots 0 and 1.
  {
    auto answers = rig.submit(4);
    if (rig.count(WorkerState::kStarting) == 2) {  // (when they were not up already)
      for (int s : answered_by(answers)) CHECK(s < 2);
    } else {
      answered_by(answers);
    }
  }
  REQUIRE(rig.joined_in_session({"local-2", "local-3"}));
  std::set<int> new_slots = {rig.scaler->slot_of("local-2"), rig.scaler->slot_of("local-3")};
  CHECK(new_slots == std::set<int>{2, 3});
  {
    auto answers = rig.submit(8);  // round-robin: two per worker
    const auto slots = answered_by(answers);
    CHECK(slots.count(2) == 2);
    CHECK(slots.count(3) == 2);
  }
  const std::string m = rig.session->metrics_text();
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 4");
  CHECK(metric(m, "lull_autoscale_workers{state=\"desired\"}") == "lull_autoscale_workers{state=\"desired\"} 4");
  CHECK(metric(m, "lull_autoscale_scale_events_total{reason=\"forecast\"}") ==
        "lull_autoscale_scale_events_total{reason=\"forecast\"} 1");
  CHECK(metric(m, "lull_policy_workers") == "lull_policy_workers 4");

  // Back to 1x (50 QPS): after the 2 s hold-off, one step down to 2 workers.
  CHECK(rig.load(50, 1, 2).action == ScaleDecision::Action::kNone);
  CHECK(rig.load(50, 2, 3).action == ScaleDecision::Action::kNone);
  // A batch in flight on every worker (each idle worker starts its first
  // query at once), and a second query queued behind it.
  auto before = rig.submit(8);
  const ScaleDecision in = rig.load(50, 3, 4);
  REQUIRE(in.action == ScaleDecision::Action::kScaleIn);
  CHECK(in.count == 2);
  CHECK(in.reason == "forecast_lower");
  CHECK(rig.count(WorkerState::kDraining) == 2);
  auto after = rig.submit(8);
  const auto before_slots = answered_by(before);
  // The batches in flight on the drained workers finished there; what was
  // queued behind them moved to the others.
  CHECK(before_slots.count(2) == 1);
  CHECK(before_slots.count(3) == 1);
  for (int s : answered_by(after)) CHECK(s < 2);  // no new query to a draining worker
  REQUIRE(wait_until([&] { return rig.count(WorkerState::kStopped) == 2; }));
  REQUIRE(wait_until([&] { return rig.scaler->slot_of("local-2") == -1 && rig.scaler->slot_of("local-3") == -1; }));
  CHECK(rig.local().pid_of("local-2") == -1);
  CHECK(rig.local().pid_of("local-3") == -1);
  const std::string log = rig.joined_log();
  CHECK(log.find("scale_in -2 reason=forecast_lower") != std::string::npos);
  CHECK(log.find("worker local-3 stopped") != std::string::npos);
  const std::string m2 = rig.session->metrics_text();
  CHECK(metric(m2, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");
  CHECK(metric(m2, "lull_autoscale_scale_events_total{reason=\"forecast_lower\"}") ==
        "lull_autoscale_scale_events_total{reason=\"forecast_lower\"} 1");
  CHECK(metric(m2, "lull_failed_total") == "lull_failed_total 0");
}

TEST_CASE("serving autoscaler: the workers in rotation, and a variant's capacities from the next tick",
          "[manager][serving][variants]") {
  Rig rig("");
  REQUIRE(rig.scaler->start_initial(60'000'000) == 2);
  REQUIRE(rig.joined_in_session({"local-0", "local-1"}));
  // What the variant switcher asks for: the management URLs of the workers up.
  std::set<std::string> urls;
  for (const auto& w : rig.pool->list_workers())
    if (w.state == WorkerState::kUp) urls.insert(w.management_url);
  const auto listed = rig.scaler->management_urls_up();
  CHECK(std::set<std::string>(listed.begin(), listed.end()) == urls);
  CHECK(listed.size() == 2);
  // A variant whose policies carry 200 QPS a worker: 400 QPS fits the 2 up
  // (with the full set's capacities it needs 4: the test above).
  auto fast = rig.library;
  for (auto& t : fast)
    for (auto& p : t.policies) p.expected_violation_rate = p.load_qps <= 200 * t.workers ? 0.002 : 0.03;
  rig.scaler->use_library(fast);
  const ScaleDecision d = rig.load(400, 0, 1);
  CHECK(d.need == 2);
  CHECK(d.action == ScaleDecision::Action::kNone);
  CHECK(rig.count(WorkerState::kStarting) == 0);
  auto other = rig.library;
  other.pop_back();
  CHECK_THROWS_WITH(rig.scaler->use_library(other), Catch::Contains("other worker counts"));
}

TEST_CASE("serving autoscaler: a worker killed while it drains loses no query", "[manager][serving][fault]") {
  Rig rig("", 2000);  // long batches: the kill lands while one is in flight
  REQUIRE(rig.scaler->start_initial(60'000'000) == 2);
  REQUIRE(rig.load(400, 0, 1).action == ScaleDecision::Action::kScaleOut);
  REQUIRE(rig.joined_in_session({"local-2", "local-3"}));
  rig.load(50, 1, 2);
  rig.load(50, 2, 3);
  auto answers = rig.submit(4);  // one batch in flight on each worker
  const int killed_slot = rig.scaler->slot_of("local-3");
  REQUIRE(rig.load(50, 3, 4).action == ScaleDecision::Action::kScaleIn);
  const int pid = rig.local().pid_of("local-3");
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  // Its batch fails over to a worker still up: answered, not lost.
  std::multiset<int> slots = answered_by(answers);
  CHECK(slots.count(killed_slot) == 0);
  // Gone, and its slot free. Usually the pool sees it die ("failed while
  // draining"); when the failed batch completes the drain before the process
  // is reaped, the pool stops it as drained instead: both end it.
  WorkerState killed_state = WorkerState::kStarting;
  REQUIRE(wait_until([&] {
    for (const auto& w : rig.pool->list_workers())
      if (w.id == "local-3") killed_state = w.state;
    return (killed_state == WorkerState::kFailed || killed_state == WorkerState::kStopped) &&
           rig.scaler->slot_of("local-3") < 0;
  }));
  REQUIRE(wait_until([&] {
    for (const auto& w : rig.pool->list_workers())
      if (w.id == "local-2") return w.state == WorkerState::kStopped;  // drained normally
    return false;
  }));
  const std::string m = rig.session->metrics_text();
  if (killed_state == WorkerState::kFailed) {
    CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"draining\"}") ==
          "lull_autoscale_worker_failures_total{phase=\"draining\"} 1");
    CHECK(rig.joined_log().find("worker local-3 failed (draining)") != std::string::npos);
  } else {
    CHECK(rig.joined_log().find("worker local-3 stopped") != std::string::npos);
  }
  CHECK(metric(m, "lull_failed_total") == "lull_failed_total 0");
  CHECK(metric(m, "lull_retried_total") == "lull_retried_total 1");  // its batch, once, elsewhere
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");
  CHECK(rig.session->healthy());
}

TEST_CASE("serving autoscaler: a failing worker command holds scaling with backoff while serving goes on",
          "[manager][serving][fault]") {
  // The command fails (exit 3) once the marker file exists: the initial
  // workers start, the scale-out's do not.
  char tmpl[] = "/tmp/lull-fail-marker-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string marker = std::string(tmpl) + "/fail";
  Rig rig("sh -c 'if [ -e " + marker + " ]; then echo \"cannot start: marker present\" >&2; exit 3; fi; exec " +
          Rig::server_command(50) + "'");
  REQUIRE(rig.scaler->start_initial(60'000'000) == 2);
  REQUIRE(std::system(("touch " + marker).c_str()) == 0);

  REQUIRE(rig.load(400, 0, 1).action == ScaleDecision::Action::kScaleOut);
  REQUIRE(rig.logged("(2 failed starts in a row)"));
  // Two failed starts in a row: on hold for 1 s x 2 from the decision at 1 s.
  std::string log = rig.joined_log();
  CHECK(log.find("failed (start): exited with status 3 during start-up") != std::string::npos);
  CHECK(log.find("cannot start: marker present") != std::string::npos);
  CHECK(log.find("scaling on hold for 2.0 s (2 failed starts in a row)") != std::string::npos);
  CHECK(rig.load(400, 1, 2).action == ScaleDecision::Action::kNone);  // held
  std::string m = rig.session->metrics_text();
  CHECK(metric(m, "lull_autoscale_worker_failures_total{phase=\"start\"}") ==
        "lull_autoscale_worker_failures_total{phase=\"start\"} 2");
  CHECK(metric(m, "lull_autoscale_hold_seconds") == "lull_autoscale_hold_seconds 1");
  CHECK(m.find("lull_autoscale_last_failure_info{worker=\"local-") != std::string::npos);
  CHECK(m.find("\",reason=\"exited with status 3 during start-up") != std::string::npos);
  // Serving goes on with the workers up.
  {
    auto answers = rig.submit(6);
    for (int s : answered_by(answers)) CHECK(s < 2);
  }
  // The hold over, the autoscaler asks again: it fails again, the hold doubles (4 failures: 8 s, the maximum).
  const ScaleDecision retry = rig.load(400, 2, 3);
  REQUIRE(retry.action == ScaleDecision::Action::kScaleOut);
  CHECK(retry.count == 2);
  REQUIRE(rig.logged("(4 failed starts in a row)"));
  CHECK(rig.joined_log().find("scaling on hold for 8.0 s (4 failed starts in a row)") != std::string::npos);
  // Once the command works again, the next try brings the workers up and ends the hold.
  REQUIRE(std::system(("rm -rf " + std::string(tmpl)).c_str()) == 0);
  CHECK(rig.load(400, 3, 10).action == ScaleDecision::Action::kNone);  // 10 < 3 + 8: still held
  REQUIRE(rig.load(400, 11, 12).action == ScaleDecision::Action::kScaleOut);
  REQUIRE(rig.joined_in_session({"local-6", "local-7"}));
  m = rig.session->metrics_text();
  CHECK(metric(m, "lull_autoscale_hold_seconds") == "lull_autoscale_hold_seconds 0");
  CHECK(metric(m, "lull_failed_total") == "lull_failed_total 0");
}

TEST_CASE("serving autoscaler: a worker ejected by outlier detection is not counted up, so it is replaced, not stopped",
          "[manager][serving][fault][outlier]") {
  // Exactly one worker takes the marker (mv is atomic) and answers every
  // prediction 200 with an undecodable body, while its /ping passes.
  char tmpl[] = "/tmp/lull-eject-marker-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string marker = std::string(tmpl) + "/broken";
  REQUIRE(std::system(("touch " + marker).c_str()) == 0);
  lull::torchserve::OutlierOptions outlier;
  outlier.eject_after_failures = 2;
  outlier.base_ms = 600'000;  // out for the whole test
  outlier.max_ms = 600'000;
  Rig rig("sh -c 'if mv " + marker + " " + marker + ".taken 2>/dev/null; then exec " + Rig::server_command(50) +
              " --malformed-predictions; else exec " + Rig::server_command(50) + "; fi'",
          50, outlier);
  REQUIRE(rig.scaler->start_initial(60'000'000) == 2);
  // Queries until the broken worker is ejected; each of its failed batches is
  // retried on the other worker, so every query is still answered 200.
  int ejected_slot = -1;
  for (int round = 0; round < 20 && ejected_slot < 0; ++round) {
    auto answers = rig.submit(2);
    answered_by(answers);
    for (int slot : {0, 1})
      if (rig.backend->stats(slot).ejections > 0) ejected_slot = slot;
  }
  REQUIRE(ejected_slot >= 0);
  CHECK_FALSE(rig.backend->worker_up(ejected_slot));
  std::string ejected_id;
  for (const std::string id : {"local-0", "local-1"})
    if (rig.scaler->slot_of(id) == ejected_slot) ejected_id = id;
  REQUIRE(!ejected_id.empty());
  CHECK(lull::manager::testing::find_worker(*rig.pool, ejected_id).state == WorkerState::kUp);  // the pool's view

  // 150 QPS needs the library's 2 workers: one is in rotation, so one more.
  // (Counted up, the ejected worker hid the lost capacity: no action.)
  const ScaleDecision d = rig.load(150, 0, 1);
  REQUIRE(d.action == ScaleDecision::Action::kScaleOut);
  CHECK(d.count == 1);
  CHECK(d.reason == "forecast");
  CHECK(d.before.up == 1);
  CHECK(d.before.out_of_rotation == 1);
  CHECK(rig.joined_log().find("scale_out +1 reason=forecast need=2 up=1 starting=0 draining=0 out_of_rotation=1") !=
        std::string::npos);
  REQUIRE(rig.joined_in_session({"local-2"}));
  // The ejected worker is not stopped; the new one serves with the good one.
  CHECK(lull::manager::testing::find_worker(*rig.pool, ejected_id).state == WorkerState::kUp);
  {
    auto answers = rig.submit(6);
    for (int s : answered_by(answers)) CHECK(s != ejected_slot);
  }
  const std::string m = rig.session->metrics_text();
  CHECK(metric(m, "lull_autoscale_workers{state=\"up\"}") == "lull_autoscale_workers{state=\"up\"} 2");
  CHECK(metric(m, "lull_autoscale_workers{state=\"out_of_rotation\"}") ==
        "lull_autoscale_workers{state=\"out_of_rotation\"} 1");
  // Enough now: no further scale-out while the ejected worker stays out.
  CHECK(rig.load(150, 1, 2).action == ScaleDecision::Action::kNone);
  std::system(("rm -rf " + std::string(tmpl)).c_str());
}
