// The bouncer's verdict on hand-checkable numbers: the fastest model takes
// 5, 6, 7, 8 ms for batches of 1..4 (B = 4).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "runtime/core/admission.h"

using lull::core::AdmissionInput;
using lull::core::admit_query;
using lull::core::retry_after_seconds;

namespace {
const std::vector<double> kFastest = {5e3, 6e3, 7e3, 8e3};
}

TEST_CASE("admission: an idle worker with an empty queue finishes in lat(0, 1)", "[runtime][admission]") {
  const auto v = admit_query(AdmissionInput{1'000, 1'000 + 500'000, 0, 0}, kFastest);
  CHECK(v.admit);
  CHECK(v.earliest_completion_us == 1'000 + 5'000);
}

TEST_CASE("admission: the queue drains in full batches of B plus one for the rest", "[runtime][admission]") {
  // 9 queued + this one = 10 = 2 * 4 + 2: 2 * 8 ms + 6 ms = 22 ms, after 3 ms of busy time.
  const AdmissionInput in{0, 25'000, 3'000, 9};
  const auto v = admit_query(in, kFastest);
  CHECK(v.earliest_completion_us == 25'000);
  CHECK(v.admit);  // exactly on the deadline is in time
  AdmissionInput one_less = in;
  one_less.deadline_us = 24'999;
  CHECK_FALSE(admit_query(one_less, kFastest).admit);
  // 7 queued + this one = 8 = 2 full batches, no remainder: 16 ms.
  CHECK(admit_query(AdmissionInput{0, 16'000, 0, 7}, kFastest).earliest_completion_us == 16'000);
}

TEST_CASE("admission: an overrun batch counts as no busy time left", "[runtime][admission]") {
  CHECK(admit_query(AdmissionInput{0, 10'000, -4'000, 0}, kFastest).earliest_completion_us == 5'000);
}

TEST_CASE("admission: Retry-After is the backlog in whole seconds, at least 1", "[runtime][admission]") {
  // 4000 queued + 1 = 1000 * 8 ms + 5 ms = 8.005 s, plus 0.5 s busy: 8.505 s -> 9.
  const AdmissionInput in{100, 600'000, 500'000, 4'000};
  const auto v = admit_query(in, kFastest);
  CHECK_FALSE(v.admit);
  CHECK(v.earliest_completion_us == 100 + 8'505'000);
  CHECK(retry_after_seconds(in, v) == 9);
  const AdmissionInput small{0, 0, 0, 0};
  CHECK(retry_after_seconds(small, admit_query(small, kFastest)) == 1);
}

TEST_CASE("admission: a model without latencies is refused", "[runtime][admission]") {
  CHECK_THROWS_AS(admit_query(AdmissionInput{}, {}), std::invalid_argument);
}
