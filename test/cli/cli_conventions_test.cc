// The conventions every lull subcommand shares: -h and --help,
// --version, '-' as stdout for each output flag (and no file named '-'),
// renamed flags answered with their new spelling, and a compile report whose
// bytes do not change between runs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <set>

#include "test/support/cli_runner.h"

using lull::test::run_lull;
using lull::test::slurp;
using lull::test::temp_dir;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

// The subcommand names, read from `lull --help` (the command table).
std::vector<std::string> command_names() {
  const auto r = run_lull("--help");
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> names;
  const auto at = r.out.find("commands:\n");
  REQUIRE(at != std::string::npos);
  std::istringstream lines(r.out.substr(at + 10));
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("  ", 0) == 0) names.push_back(line.substr(2, line.find("  ", 2) - 2));
  return names;
}

std::string compile_tiny(const std::string& extra) {
  return "compile --profiles " + kTiny + " --slo-ms 100 --workers 2 --load-qps 50,100 --max-queue 8 --device cpu " +
         extra;
}

// A compiled tiny policy set, once per test process.
const std::string& tiny_policies() {
  static const std::string path = [] {
    const std::string p = temp_dir() + "/conventions.pb";
    const auto r = run_lull(compile_tiny("--out " + p));
    REQUIRE(r.exit_code == 0);
    return p;
  }();
  return path;
}

}  // namespace

TEST_CASE("every subcommand in the table answers -h and --help alike", "[cli][conventions]") {
  const auto names = command_names();
  REQUIRE(names.size() >= 11);
  for (const auto& name : names) {
    INFO(name);
    const auto shorter = run_lull(name + " -h");
    const auto longer = run_lull(name + " --help");
    CHECK(shorter.exit_code == 0);
    CHECK(shorter.out.find("usage: lull " + name) != std::string::npos);
    CHECK(shorter.out.find("-h [ --help ]") != std::string::npos);
    CHECK(shorter.out == longer.out);
    CHECK(run_lull("help " + name).out == longer.out);
  }
}

TEST_CASE("lull --version names the project version", "[cli][conventions]") {
  const auto r = run_lull("--version");
  CHECK(r.exit_code == 0);
  CHECK(std::regex_search(r.out, std::regex("^lull [0-9]+\\.[0-9]+\\.[0-9]+( \\(git [0-9a-f]+\\))?\n$")));
  CHECK(run_lull("-V").out == r.out);
}

TEST_CASE("'-' is stdout for every output flag, and no file named '-' appears", "[cli][conventions]") {
  std::filesystem::remove("-");
  SECTION("compile --out - writes the policy set; --report - the report") {
    const auto r = run_lull(compile_tiny("--out -"));
    REQUIRE(r.exit_code == 0);
    const std::string copy = lull::test::write_temp("from_stdout.pb", r.out);
    CHECK(slurp(copy) == slurp(tiny_policies()));  // the same bytes a file gets
    CHECK(run_lull("policy show " + copy).exit_code == 0);
    const auto rep = run_lull(compile_tiny("--out " + temp_dir() + "/r.pb --report -"));
    CHECK(rep.out.rfind("{\n  \"task\": ", 0) == 0);
  }
  SECTION("policy dump --json -") {
    const auto r = run_lull("policy dump " + tiny_policies() + " --json - --load-qps 50");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("{\"task\":", 0) == 0);
    const std::string file = temp_dir() + "/dump.json";
    REQUIRE(run_lull("policy dump " + tiny_policies() + " --json " + file + " --load-qps 50").exit_code == 0);
    CHECK(slurp(file) == r.out);
  }
  SECTION("simulate --out - and --timeline -") {
    const std::string base = "simulate --policies " + tiny_policies() + " --workers 2 --trace constant:50:3 --seed 1 ";
    const auto r = run_lull(base + "--out -");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("{", 0) == 0);
    CHECK(r.out.find("\"scheduler\"") != std::string::npos);
    CHECK(r.err.find("accuracy per satisfied query") != std::string::npos);  // the summary moved to stderr
    const auto t = run_lull(base + "--out " + temp_dir() + "/sim.json --timeline -");
    REQUIRE(t.exit_code == 0);
    CHECK(t.out.find(',') != std::string::npos);
    CHECK(t.out.find("\"scheduler\"") == std::string::npos);
  }
  SECTION("profiles interpolate --out -") {
    const auto r = run_lull("profiles interpolate --profiles " + kTiny + " --step 0.05 --out -");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("\"models\"") != std::string::npos);
  }
  SECTION("loadgen --json - (nothing listens: every request fails, the summary is still written)") {
    const auto r = run_lull(
        "loadgen --target http://127.0.0.1:1/predictions/x --rate 20 --duration 200ms "
        "--timeout-ms 500 --json -");
    CHECK(r.exit_code == 1);
    CHECK(r.out.rfind("{\"rate_asked\":", 0) == 0);
    CHECK(r.err.find("sent ") != std::string::npos);  // the text summary went to stderr
  }
  CHECK_FALSE(std::filesystem::exists("-"));
}

TEST_CASE("one meaning per flag: old spellings get one line naming the new one", "[cli][conventions][bad-input]") {
  const struct {
    std::string args, needle;
  } cases[] = {
      {"serve --policies x.pb --workers http://127.0.0.1:8080", "--servers"},
      {"serve --policies x.pb --workers=http://127.0.0.1:8080", "--servers"},
      {compile_tiny("--out x.pb --accuracy acc.json"), "--accuracy-percent"},
      {"bench compile --profiles p --accuracy a.json --slo-ms 1 --workers 1 --load-qps 1", "--accuracy-percent"},
      {"profiles import --artifact d --accuracy a.json --out x.json", "--accuracy-percent"},
      {"profiles interpolate --profiles d --accuracy a.json --out x.json", "--accuracy-percent"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = run_lull(c.args);
    CHECK(r.exit_code == 2);
    CHECK(lull::test::count_lines(r.err) == 1);
    CHECK(r.err.find(c.needle) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists("x.pb"));
}

// boost's parser takes any unambiguous prefix of a flag by default (--slo for
// --slo-ms): a shortened or mistyped flag must be refused in one line that
// names the flag meant, in every subcommand.
TEST_CASE("no flag prefix is guessed, and an unknown flag names the nearest one", "[cli][conventions][bad-input]") {
  for (const auto& name : command_names()) {
    INFO(name);
    const auto help = run_lull(name + " --help");
    REQUIRE(help.exit_code == 0);
    std::set<std::string> flags;
    const std::regex flag("--([a-z][a-z0-9-]+)");
    for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), flag); it != std::sregex_iterator(); ++it)
      flags.insert((*it)[1]);
    flags.erase("help");
    REQUIRE_FALSE(flags.empty());
    const std::string longest = *std::max_element(
        flags.begin(), flags.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    const std::string prefix = longest.substr(0, longest.size() - 2);
    if (flags.count(prefix)) continue;
    const auto r = run_lull(name + " --" + prefix + " 1");
    CHECK(r.exit_code == 2);
    CHECK(lull::test::count_lines(r.err) == 1);
    CHECK(r.err.find("unrecognised option '--" + prefix + "'") != std::string::npos);
    CHECK(r.err.find("did you mean --") != std::string::npos);
  }
  const auto typo = run_lull(compile_tiny("--out x.pb --slo-sm 100"));
  CHECK(typo.exit_code == 2);
  CHECK(typo.err == "lull compile: unrecognised option '--slo-sm'; did you mean --slo-ms?\n");
  const auto far = run_lull(compile_tiny("--out x.pb --zzzzzz 1"));
  CHECK(far.exit_code == 2);
  CHECK(far.err == "lull compile: unrecognised option '--zzzzzz'\n");
  CHECK_FALSE(std::filesystem::exists("x.pb"));
}

TEST_CASE("the compile report has the same bytes in two runs, timings aside", "[cli][conventions]") {
  const auto a = run_lull(compile_tiny("--out " + temp_dir() + "/a.pb --report -"));
  const auto b = run_lull(compile_tiny("--out " + temp_dir() + "/b.pb --report -"));
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  // Seconds are measured and differ; everything else (keys, their order,
  // expectations) must not. Blank the numbers of the timing fields only.
  const std::regex seconds(
      "(\"(total_seconds|setup|read|validate|reduce|solve|write|build_transitions|"
      "value_iteration|expectations)\": )[-0-9.e+]+");
  const std::string ra = std::regex_replace(a.out, seconds, "$1T"), rb = std::regex_replace(b.out, seconds, "$1T");
  CHECK(ra.find("\"total_seconds\": T") != std::string::npos);
  CHECK(ra.find("\"expected_accuracy\": 0.") != std::string::npos);
  CHECK(ra == rb);
}

TEST_CASE("accuracy is a fraction: a percent table in --accuracy is refused, naming --accuracy-percent",
          "[cli][conventions][bad-input]") {
  const std::string pct = lull::test::write_temp("acc_percent.json", "{\"fast\": 71.2, \"_note\": \"percent\"}");
  const auto r = run_lull(
      "loadgen --target http://127.0.0.1:1/predictions/x --rate 1 --duration 100ms --slo-ms 10 "
      "--accuracy " +
      pct);
  CHECK(r.exit_code == 2);
  CHECK(lull::test::count_lines(r.err) == 1);
  CHECK(r.err.find("acc_percent.json: fast") != std::string::npos);
  CHECK(r.err.find("--accuracy-percent") != std::string::npos);
}
