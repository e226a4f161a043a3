// The outlier ejection policy on a virtual clock: what counts, backoff, and
// the return gate (time passed; the backend adds the passing health check).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "runtime/upstream/torchserve/outlier_detector.h"

using lull::torchserve::OutlierDetector;
using lull::torchserve::OutlierOptions;
using Failure = OutlierDetector::Failure;

namespace {
constexpr std::int64_t kMs = 1000;  // virtual clock in us

OutlierOptions options(int after, std::int64_t base_ms, std::int64_t max_ms) {
  OutlierOptions o;
  o.eject_after_failures = after;
  o.base_ms = base_ms;
  o.max_ms = max_ms;
  o.good_period_ms = 10000;
  return o;
}
}  // namespace

TEST_CASE("outlier detector: consecutive failures of every kind eject, a success starts over", "[serve][outlier]") {
  OutlierDetector d(options(3, 1000, 30000));
  CHECK_FALSE(d.record_failure(Failure::kTimeout));
  CHECK_FALSE(d.record_failure(Failure::kServerError));
  d.record_success();  // e.g. a 200 whose batch had a rejected input: the worker answered
  CHECK(d.consecutive_failures() == 0);
  CHECK_FALSE(d.record_failure(Failure::kMalformed));
  CHECK_FALSE(d.record_failure(Failure::kTransport));
  CHECK_FALSE(d.should_eject());
  CHECK(d.record_failure(Failure::kMalformed));  // a 200 with an undecodable body counts
  CHECK(d.should_eject());
  CHECK(d.eject(0) == 1000);
  CHECK(d.ejected());
  CHECK_FALSE(d.should_eject());  // counting starts over with the ejection
  CHECK(d.consecutive_failures() == 0);
}

TEST_CASE("outlier detector: ejection time doubles per consecutive ejection, capped", "[serve][outlier]") {
  OutlierDetector d(options(1, 1000, 5000));
  std::int64_t now = 0;
  const std::int64_t expected[] = {1000, 2000, 4000, 5000, 5000};
  for (std::int64_t ms : expected) {
    REQUIRE(d.record_failure(Failure::kTimeout));
    CHECK(d.eject(now) == ms);
    CHECK_FALSE(d.may_return(now + ms * kMs - 1));
    CHECK(d.may_return(now + ms * kMs));
    now += ms * kMs + 100 * kMs;
    d.returned(now);
    CHECK_FALSE(d.ejected());
    now += 100 * kMs;  // fails again soon after coming back
  }
  CHECK(d.consecutive_ejections() == 5);
}

TEST_CASE("outlier detector: a period of good behaviour resets the backoff", "[serve][outlier]") {
  OutlierDetector d(options(1, 1000, 30000));
  d.record_failure(Failure::kTimeout);
  CHECK(d.eject(0) == 1000);
  d.returned(1000 * kMs);
  d.record_failure(Failure::kTimeout);
  CHECK(d.eject(2000 * kMs) == 2000);  // back only 1 s: doubled
  d.returned(4000 * kMs);
  d.record_failure(Failure::kTimeout);
  CHECK(d.eject(4000 * kMs + 10000 * kMs) == 1000);  // back the whole good period: base again
}

TEST_CASE("outlier detector: never ejected, it may always return", "[serve][outlier]") {
  OutlierDetector d(options(2, 1000, 30000));
  CHECK(d.may_return(0));
  d.record_failure(Failure::kServerError);
  CHECK(d.may_return(0));
}

TEST_CASE("outlier detector: bad options are refused", "[serve][outlier]") {
  CHECK_THROWS_AS(OutlierDetector(options(0, 1000, 30000)), std::invalid_argument);
  CHECK_THROWS_AS(OutlierDetector(options(3, 0, 30000)), std::invalid_argument);
  CHECK_THROWS_AS(OutlierDetector(options(3, 2000, 1000)), std::invalid_argument);
}
