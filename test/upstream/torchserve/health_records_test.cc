// Each worker's health record and its transitions (health_records.h) on a
// virtual clock: pings bring back a worker that is down but never one that
// is ejected, a ping or probe sent before a worker went down (or was
// assigned) decides nothing, consecutive failed batches eject for a time
// that doubles at each failed probe, a probe is due at the ejection's end or
// at once when the key file it refused has new keys.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "runtime/core/clock.h"
#include "runtime/core/control_loop.h"
#include "runtime/upstream/torchserve/health_records.h"

using lull::core::Controller;
using lull::core::VirtualClock;
using lull::torchserve::BatchFault;
using lull::torchserve::HealthRecords;
using lull::torchserve::OutlierDetector;
using lull::torchserve::OutlierOptions;
using Probe = HealthRecords::Probe;

namespace {
constexpr std::int64_t kMs = 1000;
const auto kServer = OutlierDetector::Failure::kServerError;
OutlierOptions options() {
  OutlierOptions o;
  o.eject_after_failures = 3;
  o.base_ms = 1000;
  o.max_ms = 8000;
  return o;
}
// Fails `n` batches of worker 0 with a server error; the last one's fault.
BatchFault fail(HealthRecords& h, int n, bool refused = false, std::optional<std::uint64_t> reloads = std::nullopt) {
  BatchFault f;
  for (int i = 0; i < n; ++i) f = h.batch_failed(0, "m: HTTP 500", true, kServer, refused, reloads);
  return f;
}
}  // namespace

TEST_CASE("health records: a worker starts down, a passing ping brings it up, a failing one takes it down",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(2, options(), clock);
  CHECK_FALSE(h.up(0));
  CHECK(h.ping_passed(0, h.epoch(0)));
  CHECK(h.up(0));
  CHECK_FALSE(h.ping_passed(0, h.epoch(0)));  // already up: no change
  std::string why;
  CHECK(h.ping_failed(0, "HTTP 503", &why));
  CHECK(why == "went down: ping: HTTP 503");
  CHECK(h.at(0).last_error == "ping: HTTP 503");
  h.take_down(0, why);
  CHECK_FALSE(h.up(0));
  CHECK(h.at(0).down_why == why);
  CHECK_FALSE(h.ping_failed(0, "HTTP 503", &why));  // down already: nothing to take down
  CHECK_FALSE(h.up(1));                             // the other is untouched
}

TEST_CASE("health records: a ping sent before the worker went down or was assigned decides nothing",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.assign(0);
  const std::uint64_t before = h.epoch(0);
  h.take_down(0, "went down: connection refused");
  CHECK_FALSE(h.ping_passed(0, before));  // answered for the server that was gone
  CHECK_FALSE(h.up(0));
  CHECK(h.ping_passed(0, h.epoch(0)));
}

TEST_CASE("health records: one ping refused for its key waits for the next, two in a row take the worker down",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.assign(0);
  std::string why;
  const std::string refusal = "refused the inference key (HTTP 401)";
  CHECK_FALSE(h.ping_failed(0, refusal, &why, true));  // the key file may not hold the new key yet
  CHECK(h.up(0));
  CHECK(why.empty());
  CHECK_FALSE(h.ping_passed(0, h.epoch(0)));  // up already, but a passing ping: the refusals start over
  CHECK_FALSE(h.ping_failed(0, refusal, &why, true));
  CHECK(h.up(0));
  CHECK(h.ping_failed(0, refusal, &why, true));  // the second in a row
  CHECK(why == "went down: ping: " + refusal);
  h.take_down(0, why);
  CHECK_FALSE(h.ping_failed(0, refusal, &why, true));  // down: nothing to count
  CHECK(h.ping_passed(0, h.epoch(0)));
  CHECK_FALSE(h.ping_failed(0, refusal, &why, true));  // back: one refusal waits again
  CHECK(h.up(0));
  // Any other failed ping takes it down at once, and the refusals start over.
  CHECK(h.ping_failed(0, "HTTP 500", &why));
  h.take_down(0, why);
  h.assign(0);  // up again without a passing ping
  CHECK_FALSE(h.ping_failed(0, refusal, &why, true));
  CHECK(h.up(0));
}

TEST_CASE("health records: a lost connection takes a worker down at once, a refused request counts for nothing",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.assign(0);
  const BatchFault lost =
      h.batch_failed(0, "m: connection refused", true, OutlierDetector::Failure::kTransport, false, std::nullopt);
  CHECK(lost.take_down);
  CHECK_FALSE(lost.ejected);
  CHECK(lost.down_why == "went down: m: connection refused");
  h.assign(0);
  for (int i = 0; i < 5; ++i) {
    const BatchFault f = h.batch_failed(0, "m: HTTP 404", false, kServer, false, std::nullopt);
    CHECK_FALSE(f.take_down);
    CHECK_FALSE(f.ejected);
  }
  CHECK(h.at(0).last_error == "m: HTTP 404");
}

TEST_CASE(
    "health records: consecutive failed batches eject, the probe is due at the ejection's end, and a failed "
    "one doubles it",
    "[torchserve][health]") {
  VirtualClock clock;
  clock.advance_to_us(10'000 * kMs);
  HealthRecords h(1, options(), clock);
  h.assign(0);
  CHECK_FALSE(fail(h, 2).take_down);
  h.batch_ok(0);  // a success starts the count over
  CHECK_FALSE(fail(h, 2).take_down);
  const BatchFault f = fail(h, 1);
  CHECK(f.ejected);
  CHECK(f.ejected_ms == 1000);
  CHECK(f.take_down);
  CHECK(f.down_why == "ejected for 1000 ms after 3 consecutive failed batches: m: HTTP 500");
  h.take_down(0, f.down_why);
  CHECK(h.ejection(0).total == 1);
  CHECK(h.ejection(0).ejected);
  CHECK_FALSE(h.ping_passed(0, h.epoch(0)));  // a passing ping never brings back an ejected worker
  CHECK(h.probe_due_us(0, std::nullopt) == 11'000 * kMs);
  CHECK(h.start_probe(0, 10'999 * kMs, std::nullopt, true) == Probe::kNone);  // not yet
  REQUIRE(h.start_probe(0, 11'000 * kMs, std::nullopt, true) == Probe::kSend);
  CHECK(h.probe_due_us(0, std::nullopt) == Controller::kNever);  // its probe is in flight
  CHECK(h.start_probe(0, 11'000 * kMs, std::nullopt, true) == Probe::kNone);
  const std::uint64_t epoch = h.epoch(0);
  clock.advance_to_us(11'010 * kMs);
  REQUIRE(h.probe_failed(0, epoch, "HTTP 500", std::nullopt));
  CHECK(h.at(0).last_error == "probe batch: HTTP 500; ejected again for 2000 ms");
  CHECK(h.ejection(0).total == 2);
  CHECK(h.probe_due_us(0, std::nullopt) == 13'010 * kMs);
  clock.advance_to_us(13'010 * kMs);
  REQUIRE(h.start_probe(0, clock.now_us(), std::nullopt, true) == Probe::kSend);
  REQUIRE(h.probe_passed(0, h.epoch(0)));
  CHECK(h.up(0));
  CHECK_FALSE(h.ejection(0).ejected);
  CHECK(h.probe_due_us(0, std::nullopt) == Controller::kNever);
}

TEST_CASE("health records: a probe answered after the slot was assigned decides nothing", "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.assign(0);
  h.take_down(0, fail(h, 3).down_why);
  clock.advance_to_us(1000 * kMs);
  REQUIRE(h.start_probe(0, clock.now_us(), std::nullopt, true) == Probe::kSend);
  const std::uint64_t epoch = h.epoch(0);
  h.assign(0);  // another worker takes the slot
  CHECK_FALSE(h.probe_failed(0, epoch, "HTTP 500", std::nullopt));
  CHECK(h.up(0));
  CHECK(h.ejection(0).total == 1);
}

TEST_CASE("health records: with nothing to probe with, the ejection's end lets the next passing ping bring it back",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.assign(0);
  h.take_down(0, fail(h, 3).down_why);
  clock.advance_to_us(1000 * kMs);
  CHECK(h.start_probe(0, clock.now_us(), std::nullopt, false) == Probe::kReturnedUnprobed);
  CHECK_FALSE(h.up(0));
  CHECK(h.ping_passed(0, h.epoch(0)));
}

TEST_CASE("health records: a worker ejected for a refused key is probed as soon as its key file has new keys",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.assign(0);
  const BatchFault f = fail(h, 3, true, std::uint64_t{4});
  REQUIRE(f.ejected);
  h.take_down(0, f.down_why);
  CHECK(h.probe_due_us(0, std::uint64_t{4}) == 1000 * kMs);  // the same keys: at the ejection's end
  CHECK(h.probe_due_us(0, std::uint64_t{5}) == 0);           // new keys: at once
  REQUIRE(h.start_probe(0, 0, std::uint64_t{5}, true) == Probe::kSend);
  REQUIRE(h.probe_failed(0, h.epoch(0), "HTTP 400", std::uint64_t{5}));  // the new keys fail too
  CHECK(h.probe_due_us(0, std::uint64_t{5}) == 2000 * kMs);
  CHECK(h.probe_due_us(0, std::uint64_t{6}) == 0);
  REQUIRE(h.start_probe(0, 0, std::uint64_t{6}, true) == Probe::kSend);
  REQUIRE(h.probe_passed(0, h.epoch(0)));
  CHECK(h.up(0));
  CHECK_FALSE(h.at(0).refused_key);
}

TEST_CASE(
    "health records: with models checked on rejoin, a worker that went down rejoins only when its models are "
    "loaded, the reason noted once",
    "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(2, options(), clock);
  h.check_models_on_rejoin(true);
  // Never up yet (the start-up check covered it): back at its ping, no model check.
  CHECK(h.rejoin_at_ping(0, h.epoch(0)) == HealthRecords::Rejoin::kBack);
  h.take_down(0, "went down: ping: Couldn't connect to server");
  const std::uint64_t down = h.epoch(0);
  // Its ping passes: not back yet, a model check is asked for, one at a time.
  CHECK(h.rejoin_at_ping(0, down) == HealthRecords::Rejoin::kCheckModels);
  CHECK(h.rejoin_at_ping(0, down) == HealthRecords::Rejoin::kNone);
  CHECK_FALSE(h.up(0));
  std::string note;
  CHECK_FALSE(h.models_checked(0, down, "model m not loaded (HTTP 404)", &note));
  CHECK(note == "answers its ping but stays out of rotation until its models load: model m not loaded (HTTP 404)");
  CHECK_FALSE(h.up(0));
  // The next ping checks again; still missing: stays out, nothing noted again.
  clock.advance_to_us(500 * kMs);
  CHECK(h.rejoin_at_ping(0, down) == HealthRecords::Rejoin::kCheckModels);
  note.clear();
  CHECK_FALSE(h.models_checked(0, down, "model m not loaded (HTTP 404)", &note));
  CHECK(note.empty());
  // Loaded now: back in rotation.
  CHECK(h.rejoin_at_ping(0, down) == HealthRecords::Rejoin::kCheckModels);
  CHECK(h.models_checked(0, down, "", &note));
  CHECK(h.up(0));
  CHECK(note.empty());
  CHECK_FALSE(h.models_checked(0, down, "", &note));  // a late answer changes nothing
  CHECK(h.up(1) == false);
}

TEST_CASE("health records: a model check answered after the worker went down again or was assigned decides nothing",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.check_models_on_rejoin(true);
  h.take_down(0, "went down: ping: HTTP 503");
  const std::uint64_t before = h.epoch(0);
  REQUIRE(h.rejoin_at_ping(0, before) == HealthRecords::Rejoin::kCheckModels);
  h.take_down(0, "went down: ping: HTTP 503");  // gone again meanwhile
  std::string note;
  CHECK_FALSE(h.models_checked(0, before, "", &note));
  CHECK_FALSE(h.up(0));
  // Its next passing ping asks for a new check, and that one decides.
  REQUIRE(h.rejoin_at_ping(0, h.epoch(0)) == HealthRecords::Rejoin::kCheckModels);
  h.assign(0);  // a pool's worker took the slot: up, checked by its pool
  CHECK_FALSE(h.models_checked(0, before, "model m not loaded (HTTP 404)", &note));
  CHECK(h.up(0));
  CHECK(note.empty());
}

TEST_CASE("health records: without models checked on rejoin, a worker that went down rejoins at its ping",
          "[torchserve][health]") {
  VirtualClock clock;
  HealthRecords h(1, options(), clock);
  h.take_down(0, "went down: ping: HTTP 503");
  CHECK(h.rejoin_at_ping(0, h.epoch(0)) == HealthRecords::Rejoin::kBack);
  CHECK(h.up(0));
}
