// Adaptation to the arrival pattern, the quick version of
// experiments/arrival_adaptation.py: image task, 9 Pareto models,
// SLO 150 ms, K = 20 at a constant 840 QPS whose pattern steps Poisson ->
// gamma:4 -> batch:4 -> Poisson (`lull simulate --arrivals` with steps).
// Served by a library with Poisson and gamma:4 sets, each for that one load
// so that only the pattern changes the policy (adaptation: the load
// monitor's estimate picks the set) and by the Poisson set alone (no
// adaptation). lull's promise is its expectation: in
// the bursty phases the first keeps the violation within what the policies
// it serves expect (+ 0.2 points of tolerance), the second does not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/runtime_test_support.h"
#include "test/support/cli_runner.h"

namespace {

using Outcome = lull::test::CliOutcome;

Outcome run_lull(const std::string& args) { return lull::test::run_cli(std::string(LULL_BINARY) + " " + args); }

std::string dir() {
  const auto d = std::filesystem::temp_directory_path() / "lull_arrival_adaptation";
  std::filesystem::create_directories(d);
  return d.string();
}

// Violated over completed queries in seconds [from, to) of a --timeline CSV,
// what the policies in use expected (weighted alike), and the share of those
// seconds served by a policy for `arrivals`.
struct Phase {
  double violation = 0;
  double expected = 0;
  double served_share = 0;
};

Phase phase(const std::string& csv_path, int from, int to, const std::string& arrivals) {
  std::ifstream in(csv_path);
  std::string line;
  std::getline(in, line);  // header: second,arrivals,completed,violated,...,policy_arrivals last
  REQUIRE(line.find(",policy_expected_violation,") != std::string::npos);
  double done = 0, late = 0, expected = 0, seconds = 0, served = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (line.back() == ',') f.push_back("");
    const int s = std::stoi(f.at(0));
    if (s < from || s >= to) continue;
    done += std::stod(f.at(2));
    late += std::stod(f.at(3));
    expected += std::stod(f.at(2)) * std::stod(f.at(7));
    seconds += 1;
    served += f.back() == arrivals ? 1 : 0;
  }
  return Phase{done > 0 ? late / done : 0, done > 0 ? expected / done : 0, seconds > 0 ? served / seconds : 0};
}

const std::string kShared = lull::test::shared_dir() + "/ramsis-artifact";
const std::string kProfiles =
    "--profiles " + kShared + "/profiles/image_cloud_cpu --accuracy-percent " + kShared + "/image_accuracy.json";

// The image task's set for K = 20 at 840 QPS under `arrivals`, written to `out`.
void compile_set(const std::string& arrivals, const std::string& out) {
  const Outcome c =
      run_lull("compile " + kProfiles +
               " --models shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,efficientnet_b3,"
               "efficientnet_b4,efficientnet_v2_s,efficientnet_v2_m,efficientnet_v2_l --slo-ms 150 --workers 20 "
               "--load-qps 840 --device cpu --arrivals " +
               arrivals + " --out " + out);
  INFO(c.output);
  REQUIRE(c.code == 0);
}

}  // namespace

TEST_CASE("arrival adaptation: bursty phases stay within the expected violation with adaptation, not without",
          "[sim][cli][arrivals]") {
  LULL_SKIP_WITHOUT_SHARED();
  const std::string poisson = dir() + "/poisson.pb", gamma4 = dir() + "/gamma4.pb", lib = dir() + "/library.pb";
  compile_set("poisson", poisson);
  compile_set("gamma:4", gamma4);
  const Outcome l = run_lull("policy library " + poisson + " " + gamma4 + " --out " + lib);
  INFO(l.output);
  REQUIRE(l.code == 0);

  // 25 s per phase; each bursty phase is judged after its first 10 s (the
  // estimator's window of 4000 arrivals is 5 s at 840 QPS).
  const std::string run =
      " --workers 20 --trace constant:840:100 --arrivals poisson@0,gamma:4@25,batch:4@50,poisson@75 --seed 3";
  const std::string on_csv = dir() + "/on.csv", off_csv = dir() + "/off.csv";
  const Outcome on = run_lull("simulate --policies " + lib + run + " --out " + dir() + "/on.json --timeline " + on_csv);
  INFO(on.output);
  REQUIRE(on.code == 0);
  const Outcome off =
      run_lull("simulate --policies " + poisson + run + " --out " + dir() + "/off.json --timeline " + off_csv);
  INFO(off.output);
  REQUIRE(off.code == 0);

  for (const auto& [from, to] : {std::pair{35, 50}, std::pair{60, 75}}) {
    const Phase a = phase(on_csv, from, to, "gamma:4"), b = phase(off_csv, from, to, "poisson");
    INFO("seconds " << from << "-" << to << ": violation with adaptation " << a.violation << " (expected " << a.expected
                    << "), without " << b.violation << " (expected " << b.expected << "); gamma:4 set served "
                    << a.served_share << " of the seconds");
    CHECK(a.served_share >= 0.9);
    CHECK(a.violation <= a.expected + 0.002);
    CHECK(b.violation > b.expected + 0.002);
  }
  // Back to Poisson: the Poisson set again.
  CHECK(phase(on_csv, 90, 100, "poisson").served_share >= 0.9);
}

TEST_CASE("arrival adaptation: a pattern beyond the library is compiled online, or warned about in one line",
          "[sim][cli][arrivals][online]") {
  LULL_SKIP_WITHOUT_SHARED();
  const std::string poisson = dir() + "/poisson_only.pb", csv = dir() + "/online.csv", json = dir() + "/online.json";
  compile_set("poisson", poisson);
  const std::string run =
      "simulate --policies " + poisson + " --workers 20 --trace constant:840:30 --arrivals gamma:4 --seed 5";
  // Online compilation on: the gamma:4 policy is compiled and serves the last seconds.
  const Outcome on = run_lull(run + " --online-compile on " + kProfiles + " --out " + json + " --timeline " + csv);
  INFO(on.output);
  REQUIRE(on.code == 0);
  CHECK(phase(csv, 20, 30, "gamma:4").served_share == 1);
  CHECK(on.output.find("burstier than every policy") == std::string::npos);
  // Off: served by the Poisson set, and one warning line saying so.
  const Outcome off = run_lull(run + " --out " + json);
  INFO(off.output);
  REQUIRE(off.code == 0);
  const auto warn = off.output.find("lull simulate: warning: arrivals looked like gamma:");
  REQUIRE(warn != std::string::npos);
  CHECK(off.output.find("--online-compile on", warn) != std::string::npos);
  CHECK(std::count(off.output.begin(), off.output.end(), '\n') == 2);  // the warning and the summary
}
