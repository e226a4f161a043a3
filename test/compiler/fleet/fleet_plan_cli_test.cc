// lull plan --fleet through the binary, on two synthetic kinds (the small
// planner profile and the same at 0.6x latency): per class the cheapest mix
// meets the target, costs no more than each kind alone, and each of its
// counts is minimal for the load it carries (one worker fewer misses, checked
// by compiling that count); refused inputs are one line, exit 2.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <vector>

#include "test/support/cli_runner.h"
#include "test/support/plan_fixtures.h"

using namespace lull;
using namespace lull::test;
using Catch::Contains;

namespace {

std::string plan_dir() {
  static const std::string dir = [] {
    const std::string d = temp_dir() + "/fleet_plan";
    std::filesystem::create_directories(d);
    write_temp("fleet_plan/slow.json", small_profile_json(1.0));
    write_temp("fleet_plan/fast.json", small_profile_json(0.6));
    return d;
  }();
  return dir;
}

const char* kFleet = R"({
  "kinds": [
    {"name": "slow", "profiles": "slow.json", "price_per_s": 1.0},
    {"name": "fast", "profiles": "fast.json", "price_per_s": 1.3}
  ],
  "classes": [
    {"name": "interactive", "slo_ms": 60, "share": 0.6, "max_violation": 0.01, "min_accuracy": 0.7},
    {"name": "bulk", "slo_ms": 120, "share": 0.4, "max_violation": 0.02, "workers": {"slow": 1}}
  ]
})";

std::string write_fleet(const std::string& name, const std::string& text) {
  plan_dir();
  return write_temp("fleet_plan/" + name, text);
}

// The JSON object after "key": in `json` (from its brace to the matching one).
std::string object_after(const std::string& json, const std::string& key, std::size_t from = 0) {
  const auto at = json.find("\"" + key + "\":", from);
  REQUIRE(at != std::string::npos);
  const auto open = json.find('{', at);
  int depth = 0;
  for (auto i = open; i < json.size(); ++i) {
    depth += json[i] == '{' ? 1 : json[i] == '}' ? -1 : 0;
    if (depth == 0) return json.substr(open, i - open + 1);
  }
  FAIL("unbalanced JSON");
  return "";
}

// The expected violation and accuracy of `workers` of a kind at `load` (lull compile's report).
std::pair<double, double> compiled(const std::string& kind, int workers, double load, double slo_ms) {
  const auto r = run_lull("compile --profiles " + plan_dir() + "/" + kind + ".json --slo-ms " + std::to_string(slo_ms) +
                          " " + kSmallMdpFlags + " --workers " + std::to_string(workers) + " --load-qps " +
                          std::to_string(load) + " --out /dev/null --report -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  if (r.out.find("\"beyond_capacity\": \"yes\"") != std::string::npos) return {1.0, 0.0};
  return {json_number(r.out, "expected_violation_rate"), json_number(r.out, "expected_accuracy")};
}

// The numbers of the JSON array after "key": in `json`.
std::vector<double> array_after(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  const auto open = json.find('[', at), close = json.find(']', at);
  REQUIRE(open < close);
  std::vector<double> out;
  std::string item;
  std::stringstream in(json.substr(open + 1, close - open - 1));
  while (std::getline(in, item, ',')) out.push_back(std::stod(item));
  return out;
}

// A number as lull's JSON writes it: exactly, read back.
std::string json_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The lines of `text` that do not start with one of `prefixes`.
std::string without_lines(const std::string& text, const std::vector<std::string>& prefixes) {
  std::string out, line;
  std::stringstream in(text);
  while (std::getline(in, line)) {
    bool drop = false;
    for (const auto& p : prefixes) drop = drop || line.rfind(p, 0) == 0;
    if (!drop) out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("lull plan --fleet picks per class the cheapest mix, each count minimal, no dearer than a kind alone") {
  const std::string fleet = write_fleet("fleet.json", kFleet);
  const std::string out = temp_dir() + "/fleet_plan.json";
  const auto r =
      run_lull("plan --fleet " + fleet + " " + kSmallMdpFlags + " --load-qps 500 --weight-step 0.25 --out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("class interactive: 300 QPS"));
  CHECK_THAT(r.out, Contains("slow alone"));
  CHECK_THAT(r.out, Contains("total cost/s: cheapest mix"));
  const std::string json = slurp(out);
  const std::string cheapest = object_after(json, "cheapest");
  CHECK(json_number(cheapest, "cost_per_s") > 0);
  CHECK(json_number(cheapest, "expected_violation_rate") <= 0.01);
  CHECK(json_number(cheapest, "expected_accuracy") >= 0.7);
  const std::string alone = object_after(json, "alone");
  for (const char* kind : {"slow", "fast"}) {
    const std::string a = object_after(alone, kind);
    if (a.find("\"found\": \"yes\"") != std::string::npos)
      CHECK(json_number(cheapest, "cost_per_s") <= json_number(a, "cost_per_s") + 1e-9);
  }
  // Each kind of the cheapest mix: its count meets the target at its share, one fewer does not.
  const std::string workers = object_after(cheapest, "workers"), weights = object_after(cheapest, "weights");
  for (const char* kind : {"slow", "fast"}) {
    const int k = static_cast<int>(json_number(workers, kind));
    const double w = json_number(weights, kind);
    INFO(kind << ": " << k << " workers at weight " << w);
    if (w == 0) {
      CHECK(k == 0);
      continue;
    }
    const auto meets = compiled(kind, k, 300 * w, 60);
    CHECK(meets.first <= 0.01);
    CHECK(meets.second >= 0.7);
    if (k > 1) {
      const auto fewer = compiled(kind, k - 1, 300 * w, 60);
      CHECK((fewer.first > 0.01 || fewer.second < 0.7));
    }
  }
  // The class that names its workers plans with those kinds only.
  const auto bulk = json.find("\"name\": \"bulk\"");
  REQUIRE(bulk != std::string::npos);
  CHECK(object_after(json, "workers", bulk).find("fast") == std::string::npos);
}

TEST_CASE("lull plan --fleet --fleet-out writes the description lull compile --fleet takes, with the plan's workers") {
  const std::string fleet = write_fleet("to_compile.json", kFleet);
  const std::string plan = temp_dir() + "/planned_plan.json", planned = temp_dir() + "/planned_fleet.json";
  const auto r = run_lull("plan --fleet " + fleet + " " + kSmallMdpFlags + " --load-qps 500 --weight-step 0.25 --out " +
                          plan + " --fleet-out " + planned);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string json = slurp(plan);
  const std::string workers = object_after(object_after(json, "cheapest"), "workers");
  const auto c = run_lull("compile --fleet " + planned + " " + kSmallMdpFlags +
                          " --load-qps 500 --weight-step 0.25 --out " + temp_dir() + "/planned.pb");
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  // The interactive class's workers in the compiled fleet are the plan's cheapest mix.
  std::string expect;
  for (const char* kind : {"slow", "fast"}) {
    const int k = static_cast<int>(json_number(workers, kind));
    if (k > 0) expect += std::string(expect.empty() ? "" : ", ") + kind + " x" + std::to_string(k);
  }
  CHECK_THAT(c.out, Contains("class interactive: SLO 60 ms, share 0.6, violation <= 0.01; workers " + expect + "\n"));
}

TEST_CASE("lull plan --fleet --expect-lag on serves each class's cheapest mix through its kinds' load estimates") {
  const std::string fleet = write_fleet("served.json", kFleet);
  const std::string plain = temp_dir() + "/fleet_plan_plain.json", lag = temp_dir() + "/fleet_plan_lag.json";
  const std::string args = "plan --fleet " + fleet + " " + kSmallMdpFlags + " --load-qps 4000 --weight-step 0.1 ";
  const auto p = run_lull(args + "--out " + plain);
  REQUIRE(p.exit_code == 0);
  const auto r = run_lull(args + "--expect-lag on --out " + lag);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // At 4000 QPS the interactive class mixes both kinds, so its served figure
  // is a mix too. Without the flag: no served figure. With it: the same plan,
  // a served row per class, a note that the counts were chosen on the
  // compiled figures.
  CHECK(slurp(plain).find("\"served\"") == std::string::npos);
  CHECK_THAT(p.out, !Contains("served"));
  CHECK_THAT(r.out, Contains("the counts were chosen on the compiled figures"));
  CHECK(without_lines(r.out, {"  served ", "(served:", " x: misses the target; the counts"}) == p.out);
  const std::string json = slurp(lag);
  const struct {
    const char* name;
    double load, slo_ms;
    int kinds;  // in the cheapest mix: at 4000 QPS interactive is 3 slow + 6 fast (weights 0.2/0.8)
  } classes[] = {{"interactive", 2400, 60, 2}, {"bulk", 1600, 120, 1}};
  for (const auto& c : classes) {
    INFO("class " << c.name);
    const auto at = json.find(std::string("\"name\": \"") + c.name + "\"");
    REQUIRE(at != std::string::npos);
    const std::string cheapest = object_after(json, "cheapest", at), served = object_after(json, "served", at);
    CHECK(json_number(served, "accuracy") > 0);
    CHECK(served.find("\"counts_chosen_on\": \"compiled\"") != std::string::npos);
    // Each kind of the mix: lull compile --expect-lag on at its count, on the
    // same grid, gives the same served figure at its share of the load.
    const std::string workers = object_after(cheapest, "workers"), weights = object_after(cheapest, "weights");
    const std::string kinds = object_after(served, "kinds");
    double violation = 0, satisfied = 0, accurate = 0;
    int mixed = 0;
    for (const char* kind : {"slow", "fast"}) {
      const double w = json_number(weights, kind);
      if (!(w > 0)) {
        CHECK(kinds.find(std::string("\"") + kind + "\"") == std::string::npos);
        continue;
      }
      ++mixed;
      const std::string mine = object_after(kinds, kind);
      const int k = static_cast<int>(json_number(workers, kind));
      const double load = json_number(mine, "load_qps");
      CHECK(load == Approx(c.load * w).epsilon(1e-12));
      CHECK(json_number(mine, "workers") == k);
      const auto grid = array_after(mine, "grid_qps");
      REQUIRE(grid.size() > 10);
      CHECK(std::find(grid.begin(), grid.end(), load) != grid.end());
      std::string list;
      for (double g : grid) list += (list.empty() ? "" : ",") + json_text(g);
      const auto e = run_lull("compile --profiles " + plan_dir() + "/" + kind + ".json --slo-ms " +
                              json_text(c.slo_ms) + " " + kSmallMdpFlags + " --workers " + std::to_string(k) +
                              " --load-qps " + list + " --expect-lag on --out /dev/null --report -");
      INFO(e.err);
      REQUIRE(e.exit_code == 0);
      auto l = e.out.find("\"served\"");
      REQUIRE(l != std::string::npos);
      for (l = e.out.find("\"load_qps\":", l);
           l != std::string::npos && json_number(e.out.substr(l), "load_qps") != load;)
        l = e.out.find("\"load_qps\":", l + 1);
      REQUIRE(l != std::string::npos);
      const std::string theirs = e.out.substr(l);
      const double a = json_number(mine, "accuracy"), v = json_number(mine, "violation_rate");
      CHECK(a == Approx(json_number(theirs, "expected_accuracy")).epsilon(1e-9));
      CHECK(v == Approx(json_number(theirs, "expected_violation_rate")).epsilon(1e-9).margin(1e-12));
      violation += w * v;
      satisfied += w * (1 - v);
      accurate += w * (1 - v) * a;
    }
    REQUIRE(mixed == c.kinds);
    // The class's served figure mixes its kinds' as the compiled one does.
    CHECK(json_number(served, "violation_rate") == Approx(violation).epsilon(1e-12).margin(1e-15));
    CHECK(json_number(served, "accuracy") == Approx(accurate / satisfied).epsilon(1e-12));
  }
  // --expect-late on: the same plan; of a missing batch only the late queries
  // count, so no class's served violation is higher.
  const std::string late = temp_dir() + "/fleet_plan_late.json";
  const auto l = run_lull(args + "--expect-lag on --expect-late on --out " + late);
  INFO(l.err);
  REQUIRE(l.exit_code == 0);
  CHECK(l.out.substr(0, l.out.find("  served ")) == r.out.substr(0, r.out.find("  served ")));
  const std::string late_json = slurp(late);
  for (const char* name : {"interactive", "bulk"}) {
    INFO("class " << name);
    const auto at = json.find(std::string("\"name\": \"") + name + "\"");
    const auto late_at = late_json.find(std::string("\"name\": \"") + name + "\"");
    REQUIRE(late_at != std::string::npos);
    CHECK(object_after(late_json, "cheapest", late_at) == object_after(json, "cheapest", at));
    CHECK(json_number(object_after(late_json, "served", late_at), "violation_rate") <=
          json_number(object_after(json, "served", at), "violation_rate") + 1e-12);
  }
}

TEST_CASE("lull plan --fleet refuses bad input in one line, exit 2") {
  const std::string fleet = write_fleet("good.json", kFleet);
  const auto refused = [](const std::string& args, const std::string& what) {
    const auto r = run_lull(args);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_THAT(r.err, Contains(what));
  };
  refused("plan --fleet " + fleet + " --load-qps 0", "--load-qps");
  refused("plan --fleet " + fleet + " --load-qps 100 --out - --fleet-out -", "--fleet-out");
  refused("plan --fleet " + fleet + " --load-qps 100 --weight-step 0.4", "--weight-step");
  refused("plan --fleet " + fleet + " --load-qps 100 --expect-lag maybe", "--expect-lag: on or off, not 'maybe'");
  refused("plan --fleet " + fleet + " --load-qps 100 --expect-late on", "--expect-late on: needs --expect-lag on");
  refused("plan --fleet " + fleet + " --load-qps 100 --expect-lag on --expect-late yes",
          "--expect-late: on or off, not 'yes'");
  std::string text = kFleet;
  text.replace(text.find(R"("slow": 1)"), 9, R"("gpu": 1)");
  refused("plan --fleet " + write_fleet("unknown.json", text) + " --load-qps 100",
          "classes[1] 'bulk'.workers.gpu: unknown kind");
  text = kFleet;
  text.replace(text.find(R"("price_per_s": 1.3)"), 18, R"("price_per_s": -2)");
  refused("plan --fleet " + write_fleet("price.json", text) + " --load-qps 100", "kinds[1].price_per_s: must be >= 0");
}
