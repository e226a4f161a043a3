// What `lull compile` tells the person who ran it (a short table per load on
// stdout, no CUDA noise), and the expected share of queries per model that a
// policy records: checked against the simulator, which counts them.
#include <catch2/catch.hpp>
#include <regex>
#include <sstream>

#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

using lull::test::run_lull;
using lull::test::temp_dir;

namespace {

const std::string kMeasured = std::string(LULL_SOURCE_DIR) + "/profiles/torchvision-cpu-measured.json";

std::string compile_measured(const std::string& out, const std::string& extra = "") {
  return "compile --profiles " + kMeasured + " --slo-ms 60 --workers 2 --load-qps 20,60 --out " + out + " " + extra;
}

}  // namespace

TEST_CASE("lull compile prints one table row per load on stdout, on stderr when stdout holds output",
          "[cli][compile]") {
  const std::string out = temp_dir() + "/summary.pb";
  const auto r = run_lull(compile_measured(out));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("exp. accuracy") != std::string::npos);
  CHECK(std::regex_search(r.out, std::regex("\n +20 +0\\.[0-9]{4} +0\\.[0-9]{4}\n")));
  CHECK(std::regex_search(r.out, std::regex("\n +60 +0\\.[0-9]{4} +0\\.[0-9]{4}\n")));
  CHECK(r.err.find("CUDA") == std::string::npos);  // --device auto without a GPU says nothing of it
  const auto with_report = run_lull(compile_measured(out, "--report -"));
  REQUIRE(with_report.exit_code == 0);
  CHECK(with_report.out.rfind("{", 0) == 0);  // stdout is the JSON alone
  CHECK(with_report.err.find("exp. accuracy") != std::string::npos);
}

TEST_CASE("a policy's expected share of queries per model matches the simulator's count", "[cli][compile][simulate]") {
  const std::string out = temp_dir() + "/shares.pb";
  REQUIRE(run_lull(compile_measured(out)).exit_code == 0);
  const auto set = lull::read_policy_set(out);
  const auto& busy = set.policies(1);  // 60 QPS: several models serve
  REQUIRE(busy.expected().model_share_size() == set.models_size());
  double sum = 0;
  for (double s : busy.expected().model_share()) sum += s;
  CHECK(sum == Approx(1.0).epsilon(1e-9));

  const auto sim = run_lull("simulate --policies " + out + " --workers 2 --trace constant:60:300 --seed 1 --out -");
  REQUIRE(sim.exit_code == 0);
  // "satisfied_per_model": {"name": count, ...}
  const auto at = sim.out.find("\"satisfied_per_model\"");
  REQUIRE(at != std::string::npos);
  const std::string counts = sim.out.substr(at, sim.out.find('}', at) - at);
  std::vector<double> seen(static_cast<std::size_t>(set.models_size()), 0.0);
  double total = 0;
  for (int m = 0; m < set.models_size(); ++m) {
    std::smatch hit;
    const std::regex one("\"" + set.models(m).name() + "\": *([0-9]+)");
    if (std::regex_search(counts, hit, one)) seen[static_cast<std::size_t>(m)] = std::stod(hit[1]);
    total += seen[static_cast<std::size_t>(m)];
  }
  REQUIRE(total > 10000);
  for (int m = 0; m < set.models_size(); ++m) {
    INFO(set.models(m).name());
    CHECK(seen[static_cast<std::size_t>(m)] / total == Approx(busy.expected().model_share(m)).margin(0.05));
  }
  // The share of table rows, which `policy show` used to print, is far off.
  int rows_fastest = 0;
  for (unsigned a : busy.action_model()) rows_fastest += a == 0 ? 1 : 0;
  CHECK(static_cast<double>(rows_fastest) / busy.action_model_size() > busy.expected().model_share(0) + 0.5);

  const auto show = run_lull("policy show " + out);
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.find("expected share of queries by model") != std::string::npos);
}

TEST_CASE("lull compile --workers given out of order: a warning names the worker count it is about", "[cli][compile]") {
  // At 200 QPS one worker is overloaded and four are not: the warning is the
  // one worker's, whatever order --workers lists them in.
  const std::string out = temp_dir() + "/unordered.pb";
  const auto r =
      run_lull("compile --profiles " + std::string(LULL_SOURCE_DIR) +
               "/test/data/tiny_profile.json --slo-ms 100 --workers 4,1 --load-qps 200 --max-queue 8 --out " + out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("above 0.05 at 1 of 2 loads (worst ") != std::string::npos);
  CHECK(r.err.find(" at 1 workers, 200 QPS)") != std::string::npos);
}

TEST_CASE("lull compile: high expected violations are one warning line with their count", "[cli][compile]") {
  // Eight loads, the upper ones beyond one worker: one line counts them, and a
  // log (stderr not a terminal) gets no line per load.
  const std::string out = temp_dir() + "/many_high.pb";
  const auto r =
      run_lull("compile --profiles " + std::string(LULL_SOURCE_DIR) +
               "/test/data/tiny_profile.json --slo-ms 100 --workers 1 --load-qps 25:200:25 --max-queue 8 --out " + out);
  REQUIRE(r.exit_code == 0);
  std::size_t warnings = 0;
  for (std::size_t at = r.err.find("warning"); at != std::string::npos; at = r.err.find("warning", at + 1)) ++warnings;
  CHECK(warnings == 1);
  CHECK(std::regex_search(r.err, std::regex("above 0\\.05 at [1-8] of 8 loads \\(worst [01]\\.[0-9]+ at 1 workers, ")));
  CHECK(r.err.find("loads, ") == std::string::npos);  // no progress line per load
}

TEST_CASE("lull policy show --json: the summary's facts as JSON, for a set and a library", "[cli][compile]") {
  const std::string set = temp_dir() + "/show_json.pb";
  REQUIRE(run_lull(compile_measured(set)).exit_code == 0);
  const auto r = run_lull("policy show " + set + " --json -");
  REQUIRE(r.exit_code == 0);
  const auto file = run_lull("policy show " + set + " --json " + temp_dir() + "/show.json");
  REQUIRE(file.exit_code == 0);
  CHECK(lull::test::slurp(temp_dir() + "/show.json") == r.out);
  // Parsed by Python's json: the loads, an expected share per model summing to 1.
  const auto parsed =
      lull::test::run_cli("/usr/bin/python3 -c \"import json,sys; j=json.load(open('" + temp_dir() +
                          "/show.json')); print(j['kind'], j['workers'], [p['load_qps'] for p in j['policies']], "
                          "round(sum(j['policies'][1]['expected_share_by_model'].values()), 6), len(j['models']))\"");
  CHECK(parsed.code == 0);
  CHECK(parsed.output == "policy set 2 [20, 60] 1.0 5\n");
  const std::string lib = temp_dir() + "/show_json_lib.pb";
  REQUIRE(run_lull("compile --profiles " + kMeasured + " --slo-ms 60 --workers 1,2 --load-qps 20,60 --out " + lib)
              .exit_code == 0);
  const auto l = run_lull("policy show " + lib + " --json -");
  REQUIRE(l.exit_code == 0);
  CHECK(l.out.find("\"kind\": \"policy library\"") != std::string::npos);
  CHECK(std::regex_search(l.out, std::regex("\"workers\": 1,[^]*\"workers\": 2,")));
}

TEST_CASE("lull simulate without --out prints its summary line alone", "[cli][simulate]") {
  const std::string set = temp_dir() + "/sim_no_out.pb";
  REQUIRE(run_lull(compile_measured(set)).exit_code == 0);
  const auto r = run_lull("simulate --policies " + set + " --workers 2 --trace constant:20:60 --seed 3");
  REQUIRE(r.exit_code == 0);
  CHECK(std::regex_search(r.out, std::regex("^lull: [0-9]+ queries, accuracy per satisfied query 0\\.[0-9]+, "
                                            "violation rate [0-9.e-]+, dropped 0, [0-9.e-]+ s\n$")));
  CHECK(r.err.empty());
}
