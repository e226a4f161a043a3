// lull compile --fleet and lull policy show on its output, through the
// binary, on two synthetic kinds (the small planner profile, and the same
// scaled 0.6x in latency as a faster kind): the file's splits agree with its
// own libraries' expectations, the choice is the most accurate split of the
// grid meeting the target, and every refused input is one line, exit 2, no file.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "schema/fleet_file.h"
#include "test/support/cli_runner.h"
#include "test/support/plan_fixtures.h"

using namespace lull;
using namespace lull::test;
using Catch::Contains;

namespace {

std::string fleet_dir() {
  static const std::string dir = [] {
    const std::string d = temp_dir() + "/fleet_cli";
    std::filesystem::create_directories(d);
    write_temp("fleet_cli/slow.json", small_profile_json(1.0));
    write_temp("fleet_cli/fast.json", small_profile_json(0.6));
    return d;
  }();
  return dir;
}

const char* kFleet = R"({
  "kinds": [
    {"name": "slow", "profiles": "slow.json", "price_per_s": 1.0},
    {"name": "fast", "profiles": "fast.json", "price_per_s": 1.6}
  ],
  "classes": [
    {"name": "interactive", "slo_ms": 60, "share": 0.7, "max_violation": 0.01,
     "workers": {"slow": 2, "fast": 1}},
    {"name": "bulk", "slo_ms": 120, "share": 0.3, "workers": {"slow": 1}}
  ]
})";

std::string write_fleet(const std::string& name, const std::string& text) {
  fleet_dir();
  return write_temp("fleet_cli/" + name, text);
}

std::string compile_args(const std::string& fleet, const std::string& extra) {
  return "compile --fleet " + fleet + " " + kSmallMdpFlags + " " + extra;
}

// The expectation of the kind's policy compiled at `load` (it must be there).
const schema::Policy& policy_at(const schema::FleetKindPolicies& kind, double load) {
  for (const auto& set : kind.library().sets())
    if (set.workers() == kind.workers())
      for (const auto& p : set.policies())
        if (std::abs(p.inputs().load_qps() - load) < 1e-9 * load) return p;
  FAIL("no policy at " << load << " QPS for kind " << kind.kind());
  throw 0;
}

void check_refused(const std::string& args, const std::string& what) {
  const std::string out = temp_dir() + "/refused_fleet.pb";
  std::filesystem::remove(out);
  const auto r = run_lull(args + " --out " + out);
  INFO(args << "\n" << r.err);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains(what));
  CHECK_FALSE(std::filesystem::exists(out));
}

}  // namespace

TEST_CASE("lull compile --fleet writes per-kind libraries and the best split per class load") {
  const std::string fleet = write_fleet("fleet.json", kFleet);
  const std::string out = temp_dir() + "/fleet.pb", report = temp_dir() + "/fleet_report.json";
  const auto r =
      run_lull(compile_args(fleet, "--load-qps 300,600 --weight-step 0.25 --out " + out + " --report " + report));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("class interactive: SLO 60 ms"));
  CHECK_THAT(r.out, Contains("w:fast"));
  CHECK_THAT(r.out, Contains("fast alone"));
  const auto f = read_fleet_policy(out);
  REQUIRE(f.classes_size() == 2);
  const auto& c = f.classes(0);
  CHECK(c.name() == "interactive");
  REQUIRE(c.kinds_size() == 2);
  CHECK(c.kinds(0).kind() == "slow");
  CHECK(c.kinds(0).workers() == 2);
  CHECK(c.kinds(1).price_per_s() == 1.6);
  REQUIRE(c.splits_size() == 2);
  CHECK(c.splits(0).load_qps() == Approx(210));
  CHECK(c.splits(1).load_qps() == Approx(420));
  // A split's expectation, mixed from the kinds' own compiled policies.
  const auto mixed = [&](double load, const std::vector<double>& w) {
    double violation = 0, satisfied = 0, accuracy = 0;
    for (int k = 0; k < c.kinds_size(); ++k) {
      if (w[static_cast<std::size_t>(k)] == 0) continue;
      const auto& e = policy_at(c.kinds(k), load * w[static_cast<std::size_t>(k)]).expected();
      violation += w[static_cast<std::size_t>(k)] * e.violation_rate();
      satisfied += w[static_cast<std::size_t>(k)] * (1 - e.violation_rate());
      accuracy += w[static_cast<std::size_t>(k)] * (1 - e.violation_rate()) * e.accuracy();
    }
    return std::make_pair(violation, accuracy / satisfied);
  };
  for (const auto& s : c.splits()) {
    // The recorded expectation is the mix of the kinds' own compiled ones.
    const auto chosen = mixed(s.load_qps(), {s.weights(0), s.weights(1)});
    CHECK(s.violation_rate() == Approx(chosen.first));
    CHECK(s.accuracy() == Approx(chosen.second));
    // Every split of the grid (step 0.25) was compiled; none meeting the
    // target is more accurate than the choice, which meets it whenever one does.
    bool any_meets = false;
    for (double w0 : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      const auto e = mixed(s.load_qps(), {w0, 1 - w0});
      if (e.first > c.max_violation()) continue;
      any_meets = true;
      INFO(s.load_qps() << " QPS, w0 " << w0);
      CHECK(s.accuracy() >= e.second - 1e-12);
    }
    if (any_meets) CHECK(s.violation_rate() <= c.max_violation());
  }
  // A class of one kind: weight 1.
  CHECK(f.classes(1).splits(0).weights(0) == 1.0);
  const std::string json = slurp(report);
  CHECK_THAT(json, Contains("\"alone\""));
  CHECK_THAT(json, Contains("\"weights\""));

  const auto show = run_lull("policy show " + out);
  INFO(show.err);
  REQUIRE(show.exit_code == 0);
  CHECK_THAT(show.out, Contains("class interactive"));
  CHECK_THAT(show.out, Contains("kind slow: 2 workers"));
  CHECK_THAT(show.out, Contains("kind fast: 1 workers"));
  CHECK_THAT(show.out, Contains("class bulk"));
}

TEST_CASE("lull compile --fleet --count-spread adds sets around each kind's count, the splits unchanged") {
  const std::string fleet = write_fleet("spread.json", kFleet);
  const std::string own = temp_dir() + "/spread0.pb", spread = temp_dir() + "/spread1.pb";
  for (const auto& [out, extra] : {std::pair{own, ""}, std::pair{spread, " --count-spread 1"}}) {
    const auto r = run_lull(compile_args(fleet, "--load-qps 400 --weight-step 0.25 --out " + out + extra));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  const auto a = read_fleet_policy(own), b = read_fleet_policy(spread);
  std::vector<unsigned> counts;
  for (const auto& set : b.classes(0).kinds(0).library().sets()) counts.push_back(set.workers());
  CHECK(counts == std::vector<unsigned>{1, 2, 3});                // the slow kind has 2
  CHECK(b.classes(0).kinds(1).library().sets(0).workers() == 1);  // the fast kind's 1: no set for 0
  CHECK(a.classes(0).kinds(0).library().sets_size() == 1);
  CHECK(b.classes(0).splits(0).weights(0) == a.classes(0).splits(0).weights(0));
  CHECK(b.classes(0).splits(0).accuracy() == a.classes(0).splits(0).accuracy());
}

TEST_CASE("lull compile --fleet keeps the union of the kinds' Pareto fronts in every kind of a class") {
  // A kind whose "mid" model is slower than "slow" (30 ms more at every
  // batch size): pruned from its own front.
  std::string other = small_profile_json(1.0);
  for (const char* from : {"0.020000", "0.022000", "0.024000", "0.026000"}) {
    const auto at = other.find(std::string("\"latency_s\":") + from);
    REQUIRE(at != std::string::npos);
    other.replace(at + 12, 8, std::to_string(std::stod(from) + 0.03));
  }
  fleet_dir();
  write_temp("fleet_cli/other.json", other);
  std::string text = kFleet;
  text.replace(text.find("fast.json"), 9, "other.json");
  const std::string out = temp_dir() + "/union.pb";
  const auto r = run_lull(compile_args(write_fleet("union.json", text), "--load-qps 300 --out " + out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto f = read_fleet_policy(out);
  for (const auto& kind : f.classes(0).kinds()) {
    INFO(kind.kind());
    CHECK(kind.library().sets(0).models_size() == 3);
  }
}

TEST_CASE("lull compile --fleet takes a class's fixed weights as given") {
  std::string text = kFleet;
  const std::string from = R"("workers": {"slow": 2, "fast": 1}})";
  text.replace(text.find(from), from.size(),
               R"("workers": {"slow": 2, "fast": 1}, "weights": {"slow": 0.3, "fast": 0.7}})");
  const std::string fleet = write_fleet("fixed.json", text);
  const std::string out = temp_dir() + "/fixed.pb";
  const auto r = run_lull(compile_args(fleet, "--load-qps 400 --out " + out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("(fixed weights)"));
  const auto f = read_fleet_policy(out);
  CHECK(f.classes(0).splits(0).weights(0) == 0.3);
  CHECK(f.classes(0).splits(0).weights(1) == 0.7);
}

TEST_CASE("lull compile --fleet refuses bad input in one line, exit 2, no file") {
  const std::string good = write_fleet("good.json", kFleet);
  std::string text = kFleet;
  text.replace(text.find(R"("slow": 1})"), std::string(R"("slow": 1})").size(), R"("gpu": 1})");
  check_refused(compile_args(write_fleet("unknown.json", text), "--load-qps 300"),
                "classes[1] 'bulk'.workers.gpu: unknown kind");
  // A kind whose profile lacks a model the other kind has.
  std::string lacking = small_profile_json(0.6);
  const auto slow = lacking.find(",{\"name\":\"slow\"");
  REQUIRE(slow != std::string::npos);
  lacking = lacking.substr(0, slow) + "]}";
  write_temp("fleet_cli/lacking.json", lacking);
  text = kFleet;
  text.replace(text.find("fast.json"), 9, "lacking.json");
  check_refused(compile_args(write_fleet("lacking_fleet.json", text), "--load-qps 300"),
                "classes[0] 'interactive'.workers.fast: the kind's profile");
  check_refused(compile_args(good, "--load-qps 300 --weight-step 0.3"), "--weight-step");
  check_refused(compile_args(good, "--load-qps x"), "--load-qps");
  check_refused(compile_args(good, "--load-qps 300 --count-spread -1"), "--count-spread");
  check_refused(compile_args(temp_dir() + "/no_such_fleet.json", "--load-qps 300"), "no_such_fleet.json");
  check_refused(compile_args(good, "--load-qps 300 --expect-lag maybe"), "--expect-lag: on or off, not 'maybe'");
  check_refused(compile_args(good, "--load-qps 300 --expect-late on"), "--expect-late on: needs --expect-lag on");
  text = kFleet;
  text.replace(text.find(R"("share": 0.3)"), 12, R"("share": 0.2)");
  check_refused(compile_args(write_fleet("shares.json", text), "--load-qps 300"), "the shares sum to 0.9, not 1");
}

TEST_CASE("lull compile --fleet --expect-lag on reports each split served through the load estimate") {
  const std::string fleet = write_fleet("served.json", kFleet);
  const std::string dir = temp_dir();
  const std::string loads = "--load-qps 300:600:100 --weight-step 0.5 ";
  auto r = run_lull(compile_args(
      fleet, loads + "--expect-lag on --out " + dir + "/served_fleet.pb --report " + dir + "/served_fleet.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("served "));
  const std::string rep = slurp(dir + "/served_fleet.json");
  // Without the flag: the same policies, no served figures.
  r = run_lull(compile_args(fleet, loads + "--out " + dir + "/plain_fleet.pb --report " + dir + "/plain_fleet.json"));
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/plain_fleet.pb") == slurp(dir + "/served_fleet.pb"));
  CHECK(slurp(dir + "/plain_fleet.json").find("\"served\"") == std::string::npos);
  CHECK_THAT(r.out, !Contains("served "));
  // Every split of both classes has one.
  const auto bulk = rep.find("\"name\": \"bulk\"");
  REQUIRE(bulk != std::string::npos);
  int served_rows = 0;
  for (auto at = rep.find("\"served\""); at != std::string::npos; at = rep.find("\"served\"", at + 1)) ++served_rows;
  CHECK(served_rows == 8);
  // The bulk class (1 slow worker, SLO 120 ms, 90-180 QPS) alone through
  // lull compile --expect-lag on: the same served figure at each load.
  r = run_lull("compile --profiles " + fleet_dir() + "/slow.json --slo-ms 120 --workers 1 --load-qps 90:180:30 " +
               kSmallMdpFlags + " --expect-lag on --out " + dir + "/served_bulk.pb --report " + dir +
               "/served_bulk.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string alone = slurp(dir + "/served_bulk.json");
  const auto alone_served = alone.find("\"served\"");
  REQUIRE(alone_served != std::string::npos);
  auto at = bulk;
  for (const char* load : {"90", "120", "150", "180"}) {
    INFO(load << " QPS");
    at = rep.find("\"served\"", at + 1);
    REQUIRE(at != std::string::npos);
    const auto l = alone.find(std::string("\"load_qps\": ") + load, alone_served);
    REQUIRE(l != std::string::npos);
    const std::string mine = rep.substr(at), theirs = alone.substr(l);
    CHECK(json_number(mine, "accuracy") == Approx(json_number(theirs, "expected_accuracy")).epsilon(1e-9));
    CHECK(json_number(mine, "violation_rate") ==
          Approx(json_number(theirs, "expected_violation_rate")).epsilon(1e-9).margin(1e-12));
  }
}
