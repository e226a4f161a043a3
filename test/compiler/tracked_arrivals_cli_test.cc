// `--arrivals tracked:FILE` (docs/user-guide.md, "Traffic whose rate moves"):
// on a short sinusoidal-rate trace at K = 8 the fit leaves the rate swings to
// the load tracking, and the expectation it reports on the file's rates (the
// mixture over the runtime's load estimates) holds in `lull simulate` on the
// same file; a stationary trace keeps fit:FILE's answer; bad input is one
// line, exit 2, no output.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "schema/arrival_process.h"
#include "test/support/cli_runner.h"
#include "test/support/plan_fixtures.h"
#include "test/support/shared_data.h"
#include "test/support/skip.h"

using namespace lull::test;

namespace {

const std::string kModels =
    "shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,efficientnet_b3,efficientnet_b4,"
    "efficientnet_v2_s,efficientnet_v2_m,efficientnet_v2_l";

std::string image_args() {
  return "--profiles " + artifact_dir() + " --accuracy-percent " + accuracy_json() + " --models " + kModels +
         " --slo-ms 150 --device cpu";
}

// Poisson arrivals (s) at rate mean * (1 + 0.5 sin(2 pi t / period)), by thinning.
std::string sinusoid(double mean, double period, double seconds, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.5 * mean);
  std::uniform_real_distribution<double> u(0, 1);
  std::string text;
  char line[40];
  for (double t = gap(rng); t < seconds; t += gap(rng))
    if (u(rng) * 1.5 < 1 + 0.5 * std::sin(2 * M_PI * t / period)) {
      std::snprintf(line, sizeof line, "%.6f\n", t);
      text += line;
    }
  return text;
}

// A 2-state Markov-modulated Poisson process (experiments/modulated_arrivals.py's
// mmpp:R:T): rates high:low = ratio:1, exponential state times of mean
// state_s, mean rate `mean`.
std::string mmpp(double mean, double ratio, double state_s, double seconds, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> stay(1 / state_s);
  const double low = 2 * mean / (ratio + 1), high = ratio * low;
  std::string text;
  char line[40];
  bool up = false;
  for (double from = 0; from < seconds; up = !up) {
    const double to = std::min(seconds, from + stay(rng));
    std::exponential_distribution<double> gap(up ? high : low);
    for (double t = from + gap(rng); t < to; t += gap(rng)) {
      std::snprintf(line, sizeof line, "%.6f\n", t);
      text += line;
    }
    from = to;
  }
  return text;
}

std::string gamma_times(double cv2, double qps, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::gamma_distribution<double> gap(1 / cv2, cv2 / qps);
  std::string text;
  char line[40];
  double t = 0;
  for (int i = 0; i < count; ++i) {
    t += gap(rng);
    std::snprintf(line, sizeof line, "%.6f\n", t);
    text += line;
  }
  return text;
}

// The number after "key": in the report's on_trace member.
double on_trace(const std::string& report, const std::string& key) {
  const auto at = report.find("\"on_trace\"");
  REQUIRE(at != std::string::npos);
  return json_number(report.substr(at), key);
}

}  // namespace

TEST_CASE("compile --arrivals tracked:FILE: rate swings tracked, the expectation on the file holds in simulation",
          "[cli][arrivals][tracked]") {
  LULL_REQUIRE_ARTIFACT();
  const std::string dir = temp_dir();
  // 160 QPS mean, +-50%, 20 s period, 120 s: about 19,000 arrivals, 80 per load window.
  const auto file = write_temp("tracked_sin.txt", sinusoid(160, 20, 120, 5));
  const std::string pb = dir + "/tracked_sin.pb", report = dir + "/tracked_sin.json";
  auto r = run_lull("compile " + image_args() + " --workers 8 --load-qps 10:400:10 --arrivals tracked:" + file +
                    " --out " + pb + " --report " + report);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("rate modulation") != std::string::npos);
  CHECK(r.err.find("short range") != std::string::npos);
  CHECK(r.err.find("8 workers on " + file + "'s rates") != std::string::npos);
  const std::string rep = slurp(report);
  CHECK(rep.find("\"short_range\": \"poisson\"") != std::string::npos);
  const double expected_violation = on_trace(rep, "expected_violation_rate");
  const double expected_accuracy = on_trace(rep, "expected_accuracy");
  // fit:FILE reads the same swings as bursts.
  const auto fit = run_lull("compile " + image_args() + " --workers 8 --load-qps 160 --arrivals fit:" + file +
                            " --out " + dir + "/tracked_fit.pb");
  CHECK(fit.err.find("-> batch:") != std::string::npos);

  const std::string sim = dir + "/tracked_sim.json";
  r = run_lull("simulate --policies " + pb + " --workers 8 --trace arrivals:" + file + " --out " + sim);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string out = slurp(sim);
  const double violation = json_number(out, "violation_rate");
  const double accuracy = json_number(out, "accuracy_per_satisfied_query");
  INFO("expected " << expected_accuracy << " / " << expected_violation << ", simulated " << accuracy << " / "
                   << violation);
  CHECK(violation <= expected_violation + 0.002);
  CHECK(expected_violation <= violation + 0.01);
  CHECK(std::abs(accuracy - expected_accuracy) <= 0.01);
  // --expect-lag on: the same policies, each evaluated at the rate around its
  // queries; the mixture without the lag beside it, the same targets hold.
  const std::string lag_report = dir + "/tracked_sin_lag.json";
  r = run_lull("compile " + image_args() + " --workers 8 --load-qps 10:400:10 --arrivals tracked:" + file + " --out " +
               dir + "/tracked_sin_lag.pb --report " + lag_report + " --expect-lag on");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/tracked_sin_lag.pb") == slurp(pb));
  const std::string lag_rep = slurp(lag_report);
  CHECK(on_trace(lag_rep, "estimate_only_violation_rate") == Approx(expected_violation));
  const double lag_violation = on_trace(lag_rep, "expected_violation_rate");
  INFO("with the lag: expected " << on_trace(lag_rep, "expected_accuracy") << " / " << lag_violation);
  CHECK(violation <= lag_violation + 0.002);
  CHECK(lag_violation <= violation + 0.01);
  CHECK(std::abs(accuracy - on_trace(lag_rep, "expected_accuracy")) <= 0.01);

  // The planner sizes for the rates, not the mean, and says which quantile set the count.
  const std::string plan = dir + "/tracked_plan.json";
  r = run_lull("plan " + image_args() + " --max-violation 0.01 --load-qps 160 --arrivals tracked:" + file + " --out " +
               plan);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string p = slurp(plan);
  CHECK(json_number(p, "workers") >= 1);
  CHECK(json_number(p, "expected_violation_rate") <= 0.01);
  CHECK(p.find("capacity_quantile") != std::string::npos);
  // --expect-lag on: each count judged with the lag term; it meets the target with it.
  const std::string plan_lag = dir + "/tracked_plan_lag.json";
  r = run_lull("plan " + image_args() + " --max-violation 0.01 --load-qps 160 --arrivals tracked:" + file +
               " --expect-lag on --out " + plan_lag);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string pl = slurp(plan_lag);
  CHECK(pl.find("\"expect_lag\": \"on\"") != std::string::npos);
  CHECK(json_number(pl, "expected_violation_rate") <= 0.01);
  CHECK(std::abs(json_number(pl, "workers") - json_number(p, "workers")) <= 2);
  // --expect-lag transient --expect-late on: each count judged by its queue followed through the trace.
  const std::string plan_tr = dir + "/tracked_plan_transient.json";
  r = run_lull("plan " + image_args() + " --max-violation 0.01 --load-qps 160 --arrivals tracked:" + file +
               " --expect-lag transient --expect-late on --out " + plan_tr);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string pt = slurp(plan_tr);
  CHECK(pt.find("\"expect_lag\": \"transient\"") != std::string::npos);
  CHECK(pt.find("\"expect_late\": \"on\"") != std::string::npos);
  CHECK(json_number(pt, "expected_violation_rate") <= 0.01);
  CHECK(std::abs(json_number(pt, "workers") - json_number(p, "workers")) <= 2);
  r = run_lull("plan " + image_args() + " --max-violation 0.01 --load-qps 160 --arrivals tracked:" + file +
               " --expect-late on --out " + dir + "/late_only.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--expect-late on: needs --expect-lag") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/late_only.json"));
  // --trace arrivals:FILE plans the file's own rates at its mean load.
  const std::string plan2 = dir + "/tracked_plan_trace.json";
  r = run_lull("plan " + image_args() + " --max-violation 0.01 --trace arrivals:" + file + " --out " + plan2);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(std::abs(json_number(slurp(plan2), "workers") - json_number(p, "workers")) <= 1);
}

TEST_CASE(
    "compile --expect-lag transient: the backlog 1 s rate swings leave is expected, the stationary lag term misses it",
    "[cli][arrivals][lag]") {
  LULL_REQUIRE_ARTIFACT();
  const std::string dir = temp_dir();
  // MMPP 4:1 with 1 s states at 620 QPS for 150 s, K = 20: near the
  // planned capacity, where short high states fill the queues before the
  // 500 ms load estimate catches up.
  const auto file = write_temp("mmpp_4_1.txt", mmpp(620, 4, 1, 150, 3));
  const std::string args = "compile " + image_args() +
                           " --workers 20 --load-qps 20:1500:20 --arrivals tracked:" + file +
                           " --expect-late on --expect-lag ";
  auto r = run_lull(args + "transient --out " + dir + "/t.pb --report " + dir + "/t.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run_lull(args + "on --out " + dir + "/on.pb --report " + dir + "/on.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/t.pb") == slurp(dir + "/on.pb"));  // the same policies, another expectation
  r = run_lull("simulate --policies " + dir + "/t.pb --workers 20 --trace arrivals:" + file + " --out " + dir +
               "/sim.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string sim = slurp(dir + "/sim.json");
  const double violation = json_number(sim, "violation_rate"),
               accuracy = json_number(sim, "accuracy_per_satisfied_query");
  const std::string t = slurp(dir + "/t.json"), on = slurp(dir + "/on.json");
  INFO("simulated " << accuracy << " / " << violation << "; transient " << on_trace(t, "expected_accuracy") << " / "
                    << on_trace(t, "expected_violation_rate") << "; on " << on_trace(on, "expected_accuracy") << " / "
                    << on_trace(on, "expected_violation_rate"));
  CHECK(violation <= on_trace(t, "expected_violation_rate") + 0.002);
  CHECK(on_trace(t, "expected_violation_rate") <= violation + 0.01);
  CHECK(std::abs(accuracy - on_trace(t, "expected_accuracy")) <= 0.01);
  CHECK(violation > on_trace(on, "expected_violation_rate") + 0.002);  // the stationary evaluation's miss
  CHECK(t.find("queue followed through the trace") != std::string::npos);
  // Only with a trace to follow.
  r = run_lull("compile " + image_args() + " --workers 20 --load-qps 600 --expect-lag transient --out " + dir +
               "/x.pb");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--expect-lag transient: needs --arrivals tracked:FILE") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/x.pb"));
}

TEST_CASE("compile --expect-lag on at a constant load: the expectation served through the noisy estimate holds",
          "[cli][arrivals][lag]") {
  LULL_REQUIRE_ARTIFACT();
  const std::string dir = temp_dir();
  const std::string pb = dir + "/served.pb", report = dir + "/served.json", sim = dir + "/served_sim.json";
  auto r = run_lull("compile " + image_args() + " --workers 8 --load-qps 300:450:5 --expect-lag on --out " + pb +
                    " --report " + report);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("served through the 500 ms load estimate") != std::string::npos);
  const std::string rep = slurp(report);
  const auto at = rep.find("\"served\"");
  REQUIRE(at != std::string::npos);
  const auto load = rep.find("\"load_qps\": 370", at);
  REQUIRE(load != std::string::npos);
  const double served = json_number(rep.substr(load), "expected_accuracy");
  const double compiled = json_number(rep.substr(rep.find("\"load_qps\": 370")), "expected_accuracy");
  // 370 QPS held for 300 s (seed 1), the library switched by the estimate:
  // measured 0.7076; compiled at 370 0.7221 (off by more than the 1-point
  // target), served through the estimate's noise 0.7148.
  r = run_lull("simulate --policies " + pb + " --workers 8 --trace constant:370:300 --seed 1 --out " + sim);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const double simulated = json_number(slurp(sim), "accuracy_per_satisfied_query");
  INFO("simulated " << simulated << ", compiled " << compiled << ", served " << served);
  CHECK(std::abs(simulated - compiled) > 0.01);
  CHECK(std::abs(simulated - served) <= 0.01);
  // Without --expect-lag the report has no "served" member.
  r = run_lull("compile " + image_args() + " --workers 8 --load-qps 360:380:10 --out " + dir + "/plain.pb --report " +
               dir + "/plain.json");
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/plain.json").find("\"served\"") == std::string::npos);
}

TEST_CASE("compile --arrivals tracked:FILE on stationary traffic keeps fit:FILE's answer", "[cli][arrivals][tracked]") {
  const std::string tiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";
  const std::string dir = temp_dir();
  const auto file = write_temp("tracked_gamma.txt", gamma_times(4, 500, 20000, 3));
  auto args = [&](const std::string& spec, const std::string& out) {
    return "compile --profiles " + tiny + " --slo-ms 100 --workers 4 --load-qps 50 --max-queue 8 --device cpu " +
           "--arrivals " + spec + file + " --out " + out;
  };
  const auto a = run_lull(args("tracked:", dir + "/tracked_g.pb"));
  const auto b = run_lull(args("fit:", dir + "/fit_g.pb"));
  INFO(a.err << b.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.err.find("stationary") != std::string::npos);
  CHECK(slurp(dir + "/tracked_g.pb") == slurp(dir + "/fit_g.pb"));
}

TEST_CASE("bad --arrivals tracked:FILE: one line naming the file, exit 2, no output",
          "[cli][arrivals][tracked][bad-input]") {
  const std::string tiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";
  const std::string out = temp_dir() + "/tracked_never.pb";
  auto check = [&](const std::string& spec, const std::vector<std::string>& needles) {
    std::filesystem::remove(out);
    const auto r = run_lull("compile --profiles " + tiny +
                            " --slo-ms 100 --workers 4 --load-qps 50 --max-queue 8 --device cpu --arrivals " + spec +
                            " --out " + out);
    INFO(spec << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  };
  check("tracked:" + write_temp("tracked_few.txt", "0.1\n0.2\n0.3\n"), {"tracked_few.txt", "too few arrivals"});
  check("tracked:" + write_temp("tracked_back.txt", "0.1\n0.3\n0.2\n"), {"tracked_back.txt:3", "must not decrease"});
  check("tracked:/no/such/file", {"/no/such/file"});
  check("tracked:", {"--arrivals tracked:FILE"});
  check("tracked:/no/such/file --expect-lag maybe", {"--expect-lag", "maybe"});
  check("tracked:/no/such/file --fit-scale runtime", {"--fit-scale runtime", "fit:FILE only"});
  check("fit:/no/such/file --fit-scale hourly", {"--fit-scale", "hourly"});
  check("gamma:2 --expect-late on", {"--expect-late on", "--expect-lag on"});
  // plan: the file's rates or a rate trace, not both.
  const auto r = run_lull("plan --profiles " + tiny + " --slo-ms 100 --max-violation 0.01 --device cpu --arrivals " +
                          "tracked:" + write_temp("tracked_plan_times.txt", "0.1\n0.2\n") +
                          " --trace rate-file:/dev/null --out " + out);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find("--trace") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  const auto lag =
      run_lull("plan --profiles " + tiny +
               " --slo-ms 100 --max-violation 0.01 --device cpu --arrivals gamma:2 --expect-lag on --out " + out);
  INFO(lag.err);
  CHECK(lag.exit_code == 2);
  CHECK(count_lines(lag.err) == 1);
  CHECK(lag.err.find("--expect-lag on") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  const auto both = run_lull("plan --profiles " + tiny +
                             " --slo-ms 100 --max-violation 0.01 --device cpu --arrivals gamma:2 --trace arrivals:" +
                             write_temp("tracked_plan_times2.txt", "0.1\n0.2\n") + " --out " + out);
  INFO(both.err);
  CHECK(both.exit_code == 2);
  CHECK(count_lines(both.err) == 1);
  CHECK(both.err.find("--trace arrivals:FILE") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("arrival process labels are positional: batch:20, not batch:2e+01", "[arrivals][tracked]") {
  CHECK(lull::arrival_process_text(lull::ArrivalProcess::batch(20)) == "batch:20");
  CHECK(lull::arrival_process_text(lull::ArrivalProcess::batch(50)) == "batch:50");
  CHECK(lull::arrival_process_text(lull::ArrivalProcess::batch(4.3)) == "batch:4.3");
  CHECK(lull::arrival_process_text(lull::ArrivalProcess::gamma(0.32)) == "gamma:0.32");
  CHECK(lull::arrival_process_text(lull::ArrivalProcess::gamma(0.00001)) == "gamma:0.00001");
  CHECK(lull::arrival_process_text(lull::ArrivalProcess::gamma(1000)) == "gamma:1000");
  // An estimate prints to 3 significant digits, still positional.
  CHECK(lull::arrival_estimate_text(lull::ArrivalProcess::batch(48.44671491315631)) == "batch:48.4");
  CHECK(lull::arrival_estimate_text(lull::ArrivalProcess::gamma(1234.5678)) == "gamma:1230");
  CHECK(lull::arrival_estimate_text(lull::ArrivalProcess::gamma(0.012345)) == "gamma:0.0123");
  CHECK(lull::arrival_estimate_text(lull::ArrivalProcess::poisson()) == "poisson");
}
