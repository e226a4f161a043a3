// `lull simulate --trace mmpp:...|sinusoid:...` and `lull loadgen
// --modulation`: the per-second arrivals follow the moving rate, the seed
// draws it, bad specs are one line with exit 2 and no output.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "test/support/cli_runner.h"

using lull::test::run_lull;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

// The timeline CSV's arrivals per second.
std::vector<int> per_second(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  std::vector<int> out;
  while (std::getline(in, line)) out.push_back(std::stoi(line.substr(line.find(',') + 1)));
  return out;
}

}  // namespace

TEST_CASE("simulate --trace mmpp and sinusoid: the arrivals follow the moving rate", "[cli][modulated]") {
  const std::string dir = lull::test::temp_dir();
  const std::string policy = dir + "/mod_tiny.pb";
  REQUIRE(run_lull("compile --profiles " + kTiny +
                   " --slo-ms 100 --workers 4 --load-qps 10:200:10 --max-queue 8 --device cpu --out " + policy)
              .exit_code == 0);
  auto timeline = [&](const std::string& trace, const std::string& extra) {
    const auto r = run_lull("simulate --policies " + policy + " --workers 4 --trace " + trace + " " + extra +
                            " --timeline - --out " + dir + "/mod_sim.json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return per_second(r.out);
  };
  // 10:1 with 5 s states around 50 QPS: seconds near 9 and near 91.
  const auto mmpp = timeline("mmpp:50:10:5:120", "");
  REQUIRE(mmpp.size() >= 119);
  const auto [lo, hi] = std::minmax_element(mmpp.begin(), mmpp.end());
  CHECK(*lo < 20);
  CHECK(*hi > 70);
  CHECK(timeline("mmpp:50:10:5:120", "--seed 2") != mmpp);
  CHECK(timeline("mmpp:50:10:5:120", "") == mmpp);
  // +-80% over 20 s with gamma gaps within.
  const auto sin = timeline("sinusoid:50:0.8:20:60", "--arrivals gamma:2");
  const auto [slo, shi] = std::minmax_element(sin.begin(), sin.end());
  CHECK(*slo < 25);
  CHECK(*shi > 75);
  double total = 0;
  for (int n : sin) total += n;
  CHECK(total == Approx(3000).epsilon(0.15));

  const std::string never = dir + "/mod_never.json";
  for (const std::string bad :
       {"mmpp:50:10:5", "mmpp:50:0.5:5:60", "sinusoid:50:2:20:60", "mmpp:0:4:1:60", "sinusoid:50:0.5:20:0"}) {
    std::filesystem::remove(never);
    const auto r = run_lull("simulate --policies " + policy + " --workers 4 --trace " + bad + " --out " + never);
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(lull::test::count_lines(r.err) == 1);
    CHECK(r.err.find("--trace") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(never));
  }
  const auto ref = run_lull("simulate --policies " + policy +
                            " --workers 4 --trace mmpp:50:4:1:60 --replay reference " + "--out " + never);
  CHECK(ref.exit_code == 2);
  CHECK(ref.err.find("--replay reference") != std::string::npos);
  const auto lg = run_lull(
      "loadgen --target http://127.0.0.1:9/x --rate 10 --duration 1s --modulation sinusoid:3:60 "
      "--json " +
      never);
  INFO(lg.err);
  CHECK(lg.exit_code == 2);
  CHECK(lull::test::count_lines(lg.err) == 1);
  CHECK(lg.err.find("--modulation") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(never));
}
