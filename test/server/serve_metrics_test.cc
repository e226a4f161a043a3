// /metrics as operators read it: the latency histogram, per-model counters
// and HTTP response codes after a scripted run on the session's fakes, and
// `promtool check metrics` (Debian's prometheus package) on the text.
#include <catch2/catch.hpp>

#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "runtime/frontend/frontend.h"
#include "runtime/net/http_client.h"
#include "test/server/promtool_check.h"
#include "test/support/session_fakes.h"

using namespace lull::frontend;
using namespace lull::net;
using namespace lull::session;
using namespace lull::serve::testing;

namespace {

// The value of the first sample line starting with `prefix`; NaN when absent.
double metric_value(const std::string& metrics, const std::string& prefix) {
  const std::string line = metric_line(metrics, prefix);
  return line.empty() ? std::nan("") : std::stod(line.substr(line.rfind(' ') + 1));
}

// This process's user + system CPU so far, in seconds, from times(2): the
// same clock ticks /proc/self/stat counts.
double cpu_seconds() {
  struct tms t;
  times(&t);
  return static_cast<double>(t.tms_utime + t.tms_stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A scripted run on the session's fakes behind a real front end, and its
// /metrics scrape with this process's CPU time just before and after it.
struct ScriptedScrape {
  std::string metrics;
  double cpu_before = 0, cpu_after = 0;
};

ScriptedScrape scripted_scrape() {
  Rig rig(2);  // SLO 500 ms
  std::vector<std::future<Answer>> q;
  for (int i = 0; i < 5; ++i) q.push_back(rig.session->submit("q" + std::to_string(i)));
  // Batches: 0 = w0 big [q0], 1 = w1 big [q1]; finishing 0 starts 2 = w0 small
  // [q2, q3]; finishing 1 starts 3 = w1 big [q4].
  rig.clock.advance_to_us(100'000);
  rig.backend.succeed(0, {"0"});  // q0: 0.1 s, big, within the SLO
  REQUIRE(rig.backend.started.size() == 3);
  REQUIRE(rig.backend.started[2].model == 0);
  rig.clock.advance_to_us(300'000);
  rig.backend.succeed(2, {"2", "3"});  // q2, q3: 0.3 s, small, within
  rig.clock.advance_to_us(600'000);
  rig.backend.succeed(1, {"1"});  // q1: 0.6 s, big, late
  REQUIRE(rig.backend.started.size() == 4);
  REQUIRE(rig.backend.started[3].model == 1);
  rig.clock.advance_to_us(800'000);
  rig.backend.succeed(3, {"4"});  // q4: 0.8 s, big, late
  for (auto& f : q) REQUIRE(f.get().http_status == 200);

  FrontendOptions opts;
  opts.port = 0;
  opts.task = "classify";
  opts.max_body_bytes = 100;
  Frontend fe(*rig.session, opts);
  fe.start();
  const std::string base = "http://127.0.0.1:" + std::to_string(fe.port());
  auto request = [&](HttpClient& c, const std::string& method, const std::string& path, std::string body) {
    HttpRequest r;
    r.method = method;
    r.url = base + path;
    r.body = std::move(body);
    r.timeout_ms = 5000;
    return c.fetch(r);
  };
  {
    HttpClient once;  // httplib may close after a 413; keep it off the next client's connection
    CHECK(request(once, "POST", "/predictions/classify", std::string(1000, 'x')).status == 413);
  }
  // One kept-alive connection from here: each response is counted before the next request is read.
  HttpClient c;
  CHECK(request(c, "POST", "/predictions/other", "x").status == 404);
  CHECK(request(c, "POST", "/predictions/classify", "").status == 400);
  CHECK(request(c, "GET", "/metrics", "").status == 200);
  rig.session->shutdown();
  CHECK(request(c, "POST", "/predictions/classify", "late").status == 503);
  const double cpu_before = cpu_seconds();
  const auto scrape = request(c, "GET", "/metrics", "");
  const double cpu_after = cpu_seconds();
  REQUIRE(scrape.status == 200);
  return {scrape.body, cpu_before, cpu_after};
}
// A snapshot with the burstiness estimate ready and a gamma:4 policy.
ServeSnapshot bursty_snapshot() {
  ServeSnapshot s;
  s.task = "classify";
  s.model_names = {"fast"};
  s.counters.per_model = s.counters.per_model_violations = s.counters.per_model_satisfied = {0};
  s.policy_arrivals = "gamma:4";
  s.arrivals.ready = true;
  s.arrivals.gap_cv2 = 3.3;
  s.arrivals.dispersion = 4.1;
  s.arrivals.process = lull::ArrivalProcess::batch(4.1);
  s.arrival_rate_cv2 = 0.04;
  s.pattern_switches = 2;
  return s;
}

}  // namespace

TEST_CASE("serve metrics: latency histogram, per-model counters and HTTP codes", "[serve][session][metrics]") {
  const ScriptedScrape scraped = scripted_scrape();
  const std::string& m = scraped.metrics;
  const double cpu_before = scraped.cpu_before, cpu_after = scraped.cpu_after;

  // Latencies 0.1, 0.3, 0.3, 0.6, 0.8 s; the bucket at the SLO counts exactly
  // the satisfied ones. HTTP: every response the front end sent, refusals
  // included (this scrape is counted after it).
  const std::vector<std::pair<std::string, double>> expected = {
      {"lull_answered_total{model=\"big\"}", 3},
      {"lull_answered_total{model=\"small\"}", 2},
      {"lull_violations_total{model=\"big\"}", 2},
      {"lull_violations_total{model=\"small\"}", 0},
      {"lull_satisfied_total{model=\"big\"}", 1},
      {"lull_satisfied_total{model=\"small\"}", 2},
      {"lull_request_duration_seconds_bucket{le=\"0.125\"}", 1},
      {"lull_request_duration_seconds_bucket{le=\"0.375\"}", 3},
      {"lull_request_duration_seconds_bucket{le=\"0.5\"}", 3},
      {"lull_request_duration_seconds_bucket{le=\"0.625\"}", 4},
      {"lull_request_duration_seconds_bucket{le=\"1\"}", 5},
      {"lull_request_duration_seconds_bucket{le=\"+Inf\"}", 5},
      {"lull_request_duration_seconds_count", 5},
      {"lull_slo_seconds{task=\"classify\"}", 0.5},
      {"lull_http_responses_total{code=\"200\"}", 1},
      {"lull_http_responses_total{code=\"400\"}", 1},
      {"lull_http_responses_total{code=\"404\"}", 1},
      {"lull_http_responses_total{code=\"413\"}", 1},
      {"lull_http_responses_total{code=\"503\"}", 1},
      {"lull_http_responses_total{code=\"504\"}", 0}};
  for (const auto& [line, value] : expected) {
    INFO(line);
    CHECK(metric_value(m, line) == value);
  }
  CHECK(metric_value(m, "lull_satisfied_accuracy_total") == Approx(0.7 + 2 * 0.6));
  CHECK(metric_value(m, "lull_request_duration_seconds_sum") == Approx(2.1));
  CHECK(metric_value(m, "lull_build_info{") == 1);
  // The front end runs in this process: its CPU is this process's, read
  // between the two times(2) calls around the scrape.
  CHECK(metric_value(m, "process_cpu_seconds_total") >= cpu_before - 1e-9);
  CHECK(metric_value(m, "process_cpu_seconds_total") <= cpu_after + 1e-9);
  CHECK(metric_value(m, "process_resident_memory_bytes") > 0);
  CHECK(metric_value(m, "process_open_fds") > 0);
  CHECK(metric_value(m, "process_start_time_seconds") > 1.6e9);  // after 2020
}

TEST_CASE("serve metrics: the arrivals' burstiness estimate and the policy's arrival process",
          "[serve][metrics][arrivals]") {
  const std::string m = render_prometheus(bursty_snapshot());
  CHECK(metric_value(m, "lull_arrival_estimate_ready") == 1);
  CHECK(metric_value(m, "lull_arrival_gap_cv2") == Approx(3.3));
  CHECK(metric_value(m, "lull_arrival_count_dispersion") == Approx(4.1));
  CHECK(metric_value(m, "lull_arrival_burstiness{family=\"batch\"}") == Approx(4.1));
  CHECK(metric_value(m, "lull_arrival_rate_cv2") == Approx(0.04));
  CHECK(metric_value(m, "lull_policy_arrivals_info{arrivals=\"gamma:4\"}") == 1);
  CHECK(metric_value(m, "lull_arrival_pattern_switches_total") == 2);
}

// Every family has HELP and TYPE, and no name breaks Prometheus' conventions:
// Skipped without promtool (a failure under LULL_REQUIRE_TOOLS=1).
TEST_CASE("serve metrics: promtool check metrics passes on a scripted run's /metrics", "[serve][session][metrics]") {
  LULL_SKIP_WITHOUT_PROMTOOL();
  check_with_promtool(scripted_scrape().metrics);
}

TEST_CASE("serve metrics: promtool check metrics passes on the arrival families", "[serve][metrics][arrivals]") {
  LULL_SKIP_WITHOUT_PROMTOOL();
  check_with_promtool(render_prometheus(bursty_snapshot()));
}
