// Arrival processes and trace files: rates, variability, reproducibility and
// the errors for malformed input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "runtime/sim/trace_spec.h"
#include "test/support/runtime_test_support.h"

namespace {

using namespace lull::sim;
using Catch::Matchers::Contains;
using lull::test::drain;
using lull::test::write_temp;

}  // namespace

TEST_CASE("poisson arrivals have the requested rate and are reproducible", "[sim][arrivals]") {
  RateArrivals a({{0, 20, 1000}}, ArrivalProcess{}, 7);
  const auto times = drain(a);
  // 20,000 expected; 4 standard deviations is about 566.
  CHECK(std::abs(static_cast<double>(times.size()) - 20000) < 566);
  CHECK(std::is_sorted(times.begin(), times.end()));
  CHECK(times.back() < 20'000'000);
  RateArrivals again({{0, 20, 1000}}, ArrivalProcess{}, 7);
  CHECK(drain(again) == times);
  RateArrivals other({{0, 20, 1000}}, ArrivalProcess{}, 8);
  CHECK(drain(other) != times);
}

TEST_CASE("gamma arrivals have the requested CV^2", "[sim][arrivals]") {
  for (double cv2 : {0.25, 4.0}) {
    RateArrivals a({{0, 200, 500}}, ArrivalProcess::gamma(cv2), 3);
    const auto t = drain(a);
    double sum = 0, sq = 0;
    for (std::size_t i = 1; i < t.size(); ++i) {
      const double g = static_cast<double>(t[i] - t[i - 1]);
      sum += g;
      sq += g * g;
    }
    const double n = static_cast<double>(t.size() - 1), mean = sum / n, var = sq / n - mean * mean;
    CHECK(mean == Approx(2000).epsilon(0.05));  // 500 QPS -> 2 ms
    CHECK(var / (mean * mean) == Approx(cv2).epsilon(0.1));
  }
}

TEST_CASE("rate files follow each line's rate until the next line", "[sim][arrivals]") {
  const auto path = write_temp("rates.txt", "# second qps\n0 100\n10 1000\n\n20 0\n");
  const auto segs = read_rate_file(path);
  REQUIRE(segs.size() == 3);
  CHECK(segs[0].end_s == 10);
  CHECK(segs[2].end_s == 30);  // the last line holds for the previous gap
  RateArrivals a(segs, ArrivalProcess{}, 1);
  const auto t = drain(a);
  const auto first10 = std::count_if(t.begin(), t.end(), [](std::int64_t x) { return x < 10'000'000; });
  CHECK(std::abs(static_cast<double>(first10) - 1000) < 130);
  CHECK(std::abs(static_cast<double>(t.size() - first10) - 10000) < 400);
  CHECK(t.back() < 20'000'000);  // no arrivals at rate 0
}

TEST_CASE("malformed traces are refused with file and line", "[sim][arrivals]") {
  CHECK_THROWS_WITH(read_rate_file(write_temp("bad1.txt", "0 100\n10 abc\n")),
                    Contains("bad1.txt:2") && Contains("QPS"));
  CHECK_THROWS_WITH(read_rate_file(write_temp("bad2.txt", "0 100\n0 200\n")), Contains("bad2.txt:2"));
  CHECK_THROWS_WITH(read_rate_file(write_temp("bad3.txt", "0 100 7\n")), Contains("bad3.txt:1"));
  CHECK_THROWS_WITH(read_rate_file(write_temp("bad4.txt", "0 -5\n")), Contains("negative"));
  CHECK_THROWS_WITH(read_rate_file(write_temp("empty.txt", "# nothing\n")), Contains("empty.txt"));
  CHECK_THROWS_WITH(read_arrivals_file(write_temp("bad5.txt", "0.1\n0.05\n")), Contains("bad5.txt:2"));
  CHECK_THROWS_WITH(read_rate_file("/nonexistent/rates.txt"), Contains("/nonexistent/rates.txt"));
}

TEST_CASE("trace specs parse and reject bad values", "[sim][arrivals]") {
  const auto c = parse_trace_spec("constant:2000:30");
  CHECK(c.kind == TraceSpec::Kind::kConstant);
  CHECK(c.qps == 2000);
  CHECK(c.duration_s == 30);
  CHECK(parse_trace_spec("rate-file:/x/y.txt").path == "/x/y.txt");
  CHECK_THROWS_WITH(parse_trace_spec("constant:2000:-5"), Contains("duration must be positive"));
  CHECK_THROWS_WITH(parse_trace_spec("constant:0:5"), Contains("QPS must be positive"));
  CHECK_THROWS_WITH(parse_trace_spec("constant:2000"), Contains("constant:QPS:SECONDS"));
  CHECK_THROWS_WITH(parse_trace_spec("sine:5"), Contains("expected constant"));
  CHECK(lull::parse_arrival_process("gamma:2.5", "--arrivals").cv2 == 2.5);
  CHECK_THROWS(lull::parse_arrival_process("gamma:-1", "--arrivals"));
  CHECK_THROWS(lull::parse_arrival_process("weibull", "--arrivals"));
}

TEST_CASE("replayed arrivals come back exactly", "[sim][arrivals]") {
  const auto path = write_temp("arrivals.txt", "0.001\n0.0015\n0.0015\n2\n");
  const auto src = make_arrival_source(parse_trace_spec("arrivals:" + path), ArrivalProcess{}, 1);
  CHECK(drain(*src) == std::vector<std::int64_t>{1000, 1500, 1500, 2'000'000});
}
