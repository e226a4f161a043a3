// Latency drift through the serve session, on the session's fakes and a
// virtual clock: batches that take twice their profiled time start drift
// (one log line, /metrics, the on_drift observer with the corrected
// profile), batches back at the profile end it, failed batches and a
// session with detection off count nothing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test/support/session_fakes.h"

using namespace lull::session;
using namespace lull::serve::testing;

namespace {

ServeOptions drift_options(std::vector<DriftEvent>* events) {
  ServeOptions o;
  o.drift_rule.window = 4;
  o.drift_rule.min_samples = 4;
  o.drift_rule.percentile = 100;
  o.drift_rule.tolerance = 0.25;
  o.on_drift = [events](const DriftEvent& e) { events->push_back(e); };
  return o;
}

// One query alone on the one worker ("big", batch 1, profiled 20 ms), answered
// `took_us` after it was sent.
void one_batch(Rig& rig, std::int64_t* now_us, std::int64_t took_us) {
  auto f = rig.session->submit("x");
  const size_t index = rig.backend.started.size() - 1;
  REQUIRE(rig.backend.started[index].model == 1);
  REQUIRE(rig.backend.started[index].queries.size() == 1);
  *now_us += took_us;
  rig.clock.advance_to_us(*now_us);
  rig.backend.succeed(index, {"p"});
  REQUIRE(f.get().http_status == 200);
  *now_us += 1000;
  rig.clock.advance_to_us(*now_us);
}

// The tiny one-worker table, compiled at `percentile`.
lull::core::PolicyTable compiled_at(double percentile) {
  lull::core::PolicyTable t = tiny_session_table(1);
  t.percentile = percentile;
  return t;
}

double value(ServeSession& s, const std::string& prefix) {
  const std::string line = metric_line(s, prefix);
  REQUIRE_FALSE(line.empty());
  return std::stod(line.substr(line.rfind(' ') + 1));
}

}  // namespace

TEST_CASE("serve drift: batches twice as slow as profiled start drift, back at the profile it ends",
          "[serve][session][drift]") {
  std::vector<DriftEvent> events;
  Rig rig(1, {}, drift_options(&events));
  std::int64_t now = 0;
  for (int i = 0; i < 3; ++i) one_batch(rig, &now, 40'000);
  CHECK(events.empty());  // 3 < min_samples
  CHECK(value(*rig.session, "lull_latency_drift_pairs") == 0);
  one_batch(rig, &now, 40'000);
  REQUIRE(events.size() == 1);
  CHECK(events[0].model == "big");
  CHECK(events[0].pair.batch == 1);
  CHECK(events[0].pair.observed_us == 40'000);
  CHECK(events[0].pair.profiled_us == 20'000);
  // big observed at twice its profile: its other sizes scaled by 2, and so is
  // "small", which was never observed.
  CHECK(events[0].corrected_latency_us ==
        std::vector<std::vector<double>>{{10e3, 12e3, 14e3, 16e3}, {40e3, 44e3, 48e3, 52e3}});
  CHECK(value(*rig.session, "lull_latency_drift_pairs") == 1);
  CHECK(value(*rig.session, "lull_latency_drift_total") == 1);
  CHECK(value(*rig.session, "lull_batch_latency_observed_seconds{model=\"big\",batch=\"1\"}") == Approx(0.04));
  CHECK(value(*rig.session, "lull_batch_latency_profiled_seconds{model=\"big\",batch=\"1\"}") == Approx(0.02));

  // Failed batches are not timed.
  auto failed = rig.session->submit("x");
  rig.backend.fail(rig.backend.started.size() - 1, "boom");
  CHECK(failed.get().http_status == 503);

  for (int i = 0; i < 4; ++i) one_batch(rig, &now, 20'000);
  CHECK(events.size() == 1);  // the end is logged, not reported as drift
  CHECK(value(*rig.session, "lull_latency_drift_pairs") == 0);
  CHECK(value(*rig.session, "lull_latency_drift_total") == 1);
  CHECK(value(*rig.session, "lull_batch_latency_observed_seconds{model=\"big\",batch=\"1\"}") == Approx(0.02));
}

TEST_CASE("serve drift: the policy's compile percentile is the rule's, detection off exports nothing",
          "[serve][session][drift]") {
  std::vector<DriftEvent> events;
  ServeOptions o = drift_options(&events);
  o.drift_rule.percentile = 100;
  // A policy compiled at p50: one slow batch in four does not move the median.
  Rig p50(compiled_at(50), o);
  std::int64_t now = 0;
  for (std::int64_t took : {20'000, 20'000, 20'000, 90'000}) one_batch(p50, &now, took);
  CHECK(events.empty());
  CHECK(metric_line(*p50.session, "lull_batch_latency_observed_seconds{model=\"big\",batch=\"1\"}") ==
        "lull_batch_latency_observed_seconds{model=\"big\",batch=\"1\"} 0.02");

  // A policy planned with the slowest sample (p100): the verdict is the
  // default rule's p95, so one slow batch in twenty is no drift.
  ServeOptions defaults;  // window 64, 20 batches, p95, 25%
  defaults.on_drift = [&](const DriftEvent& e) { events.push_back(e); };
  Rig p100(compiled_at(100), defaults);
  now = 0;
  for (int i = 0; i < 20; ++i) one_batch(p100, &now, i == 7 ? 90'000 : 20'000);
  CHECK(events.empty());
  CHECK(metric_line(*p100.session, "lull_latency_drift_pairs") == "lull_latency_drift_pairs 0");

  ServeOptions off = drift_options(&events);
  off.detect_drift = false;
  Rig quiet(1, {}, off);
  std::int64_t t = 0;
  for (int i = 0; i < 4; ++i) one_batch(quiet, &t, 90'000);
  CHECK(events.empty());
  CHECK(quiet.session->metrics_text().find("lull_latency_drift") == std::string::npos);
}
