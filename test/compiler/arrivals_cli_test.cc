// `--arrivals` on compile, simulate and loadgen: what is recorded and shown,
// a library per (workers, process), a fit from timestamps, and bad input
// (one line naming the flag or file, exit 2, no output file).
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <random>

#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

using lull::test::run_lull;
using lull::test::write_temp;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

std::string compile_args(const std::string& out, const std::string& extra) {
  return "compile --profiles " + kTiny + " --slo-ms 100 --workers 4 --load-qps 50 --max-queue 8 --device cpu --out " +
         out + " " + extra;
}

void expect_error(const std::string& args, const std::string& out, const std::vector<std::string>& needles) {
  std::filesystem::remove(out);
  const auto r = run_lull(args);
  INFO(args << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(lull::test::count_lines(r.err) == 1);
  for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

// Arrival times (s) of `count` gamma(CV2 c) or batch(D) arrivals at 500 QPS.
std::string timestamps(bool batch, double param, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string text;
  double t = 0;
  char line[40];
  for (int i = 0; i < count;) {
    int burst = 1;
    if (batch) {  // logarithmic burst sizes, bursts at rate 500 / E[X]
      const double beta = 1 - 1 / param, mean = (param - 1) / std::log(param);
      t += std::exponential_distribution<double>(500 / mean)(rng);
      double u = std::uniform_real_distribution<double>(0, 1)(rng), p = beta / std::log(param), cdf = p;
      while (u > cdf) {
        p *= beta * burst / (burst + 1);
        ++burst;
        cdf += p;
      }
    } else {
      t += std::gamma_distribution<double>(1 / param, param / 500)(rng);
    }
    for (int b = 0; b < burst && i < count; ++b, ++i) {
      std::snprintf(line, sizeof line, "%.6f\n", t);
      text += line;
    }
  }
  return text;
}

}  // namespace

TEST_CASE("compile --arrivals records the process, policy show prints it, Poisson is the default", "[cli][arrivals]") {
  const std::string dir = lull::test::temp_dir();
  for (const std::string spec : {"poisson", "gamma:2", "batch:3", "gamma:3"}) {
    const std::string out = dir + "/arr_" + spec.substr(0, 5) + spec.substr(spec.size() - 1) + ".pb";
    const auto r = run_lull(compile_args(out, "--arrivals " + spec + " --report -"));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto set = lull::read_policy_set(out);
    CHECK(set.policies(0).inputs().arrivals() == spec);
    CHECK(set.arrivals() == (spec == "poisson" ? "" : spec));
    CHECK(r.out.find("\"arrivals\": \"" + spec + "\"") != std::string::npos);
    const bool exact = spec == "poisson" || spec == "gamma:2";  // K = 4: K/CV2 = 2; batch:3 outlasts 4 workers
    CHECK(r.out.find(exact ? "exact" : "APPROXIMATE") != std::string::npos);
    const auto show = run_lull("policy show " + out);
    REQUIRE(show.exit_code == 0);
    CHECK(show.out.find("arrivals " + spec) != std::string::npos);
  }
  // The default writes the same bytes as --arrivals poisson.
  const auto a = dir + "/arr_default.pb", b = dir + "/arr_poisson.pb";
  REQUIRE(run_lull(compile_args(a, "")).exit_code == 0);
  REQUIRE(run_lull(compile_args(b, "--arrivals poisson")).exit_code == 0);
  CHECK(lull::test::slurp(a) == lull::test::slurp(b));
}

TEST_CASE("compile --arrivals gamma:1,2,4 writes one set per (workers, process)", "[cli][arrivals]") {
  const std::string out = lull::test::temp_dir() + "/arr_library.pb";
  const auto r = run_lull(
      "compile --profiles " + kTiny +
      " --slo-ms 100 --workers 4,8 --load-qps 50 --max-queue 8 --device cpu --arrivals gamma:1,2,4 --out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto lib = lull::read_policy_library(out);
  REQUIRE(lib.sets_size() == 6);
  const char* want[] = {"gamma:1", "gamma:2", "gamma:4"};
  for (int i = 0; i < 6; ++i) {
    CHECK(lib.sets(i).workers() == (i < 3 ? 4u : 8u));
    CHECK(lib.sets(i).arrivals() == want[i % 3]);
  }
  const auto show = run_lull("policy show " + out);
  INFO(show.err);
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("gamma:4") != std::string::npos);
}

TEST_CASE("compile --arrivals fit:FILE picks the family and says why", "[cli][arrivals]") {
  const std::string out = lull::test::temp_dir() + "/arr_fit.pb";
  const struct {
    bool batch;
    double param;
    const char* family;
  } cases[] = {{false, 1, "poisson"}, {false, 4, "gamma:"}, {true, 4, "batch:"}};
  for (const auto& c : cases) {
    const auto file = write_temp("fit_times.txt", timestamps(c.batch, c.param, 20000, 3));
    const auto r = run_lull(compile_args(out, "--arrivals fit:" + file));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find(std::string("-> ") + c.family) != std::string::npos);
    CHECK(r.err.find("dispersion") != std::string::npos);
    CHECK(lull::read_policy_set(out).policies(0).inputs().arrivals().rfind(c.family, 0) == 0);
  }
}

TEST_CASE("bad --arrivals: one line naming the flag or file, exit 2, no output", "[cli][arrivals][bad-input]") {
  const std::string out = lull::test::temp_dir() + "/arr_never.pb";
  for (const std::string bad : {"gamma:0", "gamma:-1", "gamma:nan", "gamma:inf", "gamma:-inf", "batch:0.5", "batch:0",
                                "batch:-2", "batch:nan", "batch:inf", "weibull:2", "gamma:", "uniform", "gamma:2,2"})
    expect_error(compile_args(out, "--arrivals " + bad), out, {"--arrivals"});
  const auto few = write_temp("few_times.txt", "0.1\n0.2\n0.3\n");
  expect_error(compile_args(out, "--arrivals fit:" + few), out, {"few_times.txt", "too few arrivals"});
  const auto back = write_temp("backwards_times.txt", "0.1\n0.3\n0.2\n");
  expect_error(compile_args(out, "--arrivals fit:" + back), out, {"backwards_times.txt:3", "must not decrease"});
  expect_error(compile_args(out, "--arrivals fit:/no/such/file"), out, {"/no/such/file"});
  // simulate and loadgen share the parser.
  const std::string sim_out = lull::test::temp_dir() + "/arr_never.json";
  const std::string policy = lull::test::temp_dir() + "/arr_sim.pb";
  REQUIRE(run_lull(compile_args(policy, "")).exit_code == 0);
  for (const std::string bad : {"batch:0", "batch:0.5", "batch:inf", "gamma:0", "gamma:nan", "gamma:inf"})
    expect_error(
        "simulate --policies " + policy + " --workers 4 --trace constant:50:2 --arrivals " + bad + " --out " + sim_out,
        sim_out, {"--arrivals"});
  expect_error("loadgen --target http://127.0.0.1:9/x --rate 10 --duration 1s --arrivals batch:0.9 --json " + sim_out,
               sim_out, {"--arrivals"});
}

TEST_CASE("simulate --arrivals batch:D runs and records the process", "[cli][arrivals]") {
  const std::string policy = lull::test::temp_dir() + "/arr_sim_batch.pb";
  REQUIRE(run_lull(compile_args(policy, "--arrivals batch:4")).exit_code == 0);
  const auto r =
      run_lull("simulate --policies " + policy + " --workers 4 --trace constant:50:20 --arrivals batch:4 --out -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"arrivals\": \"batch:4\"") != std::string::npos);
}
