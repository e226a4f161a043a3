// Simulated batch latency (mdp-spec 8): the compiled lat(m, b) for
// b = 1..N+1; above N+1 (the fallback on a long queue) the least-squares
// line over batches 1..N.
#include <catch2/catch.hpp>

#include "runtime/sim/latency_model.h"

using lull::core::ModelInfo;
using lull::sim::table_latency_us;

TEST_CASE("batches above N+1 follow the least-squares line over 1..N", "[sim][latency]") {
  // N = 3: points (1, 10), (2, 30), (3, 35): slope 12.5, intercept 0.
  // lat(N+1) = 60 is the table's own value and does not enter the line.
  const ModelInfo m{"m", 0.5, {10, 30, 35, 60}};
  CHECK(table_latency_us(m, 1) == 10);
  CHECK(table_latency_us(m, 3) == 35);
  CHECK(table_latency_us(m, 4) == 60);
  CHECK(table_latency_us(m, 5) == Approx(62.5));  // the old last-step rule gave 85
  CHECK(table_latency_us(m, 8) == Approx(100));
}

TEST_CASE("compiled latency is the table's value, rounded to a microsecond", "[sim][latency]") {
  lull::core::PolicyTable t;
  t.models.push_back(ModelInfo{"m", 0.5, {1000.4, 2000.6, 3000}});
  lull::sim::CompiledLatency lat(t);
  CHECK(lat.batch_latency_us(0, 1) == 1000);
  CHECK(lat.batch_latency_us(0, 2) == 2001);
  CHECK(lat.batch_latency_us(0, 3) == 3000);
  // N = 2 line through (1, 1000.4), (2, 2000.6): 4001 at b = 4.
  CHECK(lat.batch_latency_us(0, 4) == 4001);
}
