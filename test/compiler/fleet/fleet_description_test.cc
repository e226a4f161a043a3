// The fleet description reader (schema/fleet_description.h): the format of
// docs/user-guide.md, relative paths, and every refused input as one line naming
// the file and the field.
#include <catch2/catch.hpp>

#include <regex>

#include "schema/fleet_description.h"
#include "test/support/cli_runner.h"

using namespace lull;
using namespace lull::test;
using Catch::Contains;

namespace {

const char* kGood = R"({
  "kinds": [
    {"name": "c5", "profiles": "image-c5.json", "price_per_s": 1.0},
    {"name": "fast", "profiles": "/abs/image-fast.json", "price_per_s": 1.6}
  ],
  "classes": [
    {"name": "interactive", "slo_ms": 150, "share": 0.7, "max_violation": 0.02,
     "workers": {"c5": 4, "fast": 2}},
    {"name": "bulk", "slo_ms": 500, "share": 0.3, "min_accuracy": 0.7,
     "workers": {"c5": 3}, "weights": {"c5": 1}}
  ]
})";

std::string write_fleet(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(temp_dir() + "/fleets");
  return write_temp("fleets/" + name, text);
}

// The good description with `from` replaced by `to` is refused with one line naming the file and `what`.
void check_refused(const std::string& from, const std::string& to, const std::string& what) {
  std::string text = kGood;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  const std::string path = write_fleet("bad.json", text);
  INFO(from << " -> " << to);
  try {
    read_fleet_description(path);
    FAIL("accepted");
  } catch (const FleetDescriptionError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(msg, Contains(path + ": "));
    CHECK_THAT(msg, Contains(what));
  }
}

}  // namespace

TEST_CASE("a fleet description reads as docs/user-guide.md says") {
  const std::string path = write_fleet("good.json", kGood);
  const auto f = read_fleet_description(path);
  REQUIRE(f.kinds.size() == 2);
  CHECK(f.kinds[0].profiles == temp_dir() + "/fleets/image-c5.json");  // relative to the file
  CHECK(f.kinds[1].profiles == "/abs/image-fast.json");
  CHECK(f.kinds[1].price_per_s == 1.6);
  REQUIRE(f.classes.size() == 2);
  const auto& c = f.classes[0];
  CHECK(c.name == "interactive");
  CHECK(c.slo_ms == 150);
  CHECK(c.max_violation == 0.02);
  REQUIRE(c.workers.size() == 2);
  CHECK(c.workers[0].kind == "c5");
  CHECK(c.workers[0].count == 4);
  CHECK(c.workers[1].kind == "fast");
  CHECK_FALSE(c.fixed_weights);
  CHECK(f.classes[1].max_violation == 0.01);  // the default
  CHECK(f.classes[1].min_accuracy == 0.7);
  CHECK(f.classes[1].fixed_weights);
  CHECK(f.classes[1].workers[0].weight == 1.0);
}

TEST_CASE("a fleet description's bad inputs are refused in one line naming the field") {
  check_refused(R"("workers": {"c5": 3})", R"("workers": {"c6": 3})", "classes[1] 'bulk'.workers.c6: unknown kind");
  check_refused(R"("workers": {"c5": 3})", R"("workers": {})", "classes[1] 'bulk'.workers: the class has no workers");
  check_refused(R"("workers": {"c5": 4, "fast": 2})", R"("workers": {"c5": 4, "fast": 0})",
                "'interactive'.workers.fast: the count must be a whole number >= 1");
  check_refused(R"("workers": {"c5": 4, "fast": 2})", R"("workers": {"c5": 4, "c5": 2})",
                "'interactive'.workers.c5: the kind is named twice");
  check_refused(R"("share": 0.3)", R"("share": 0.4)", "classes[].share: the shares sum to 1.1, not 1");
  check_refused(R"("share": 0.3)", R"("share": 0)", "'bulk'.share: must be in (0, 1]");
  check_refused(R"("weights": {"c5": 1})", R"("weights": {"c5": 0.9})", "'bulk'.weights: sum to 0.9, not 1");
  check_refused(R"("weights": {"c5": 1})", R"("weights": {"fast": 1})",
                "'bulk'.weights.fast: not a kind of the class's workers");
  check_refused(R"("price_per_s": 1.6)", R"("price_per_s": "NaN")", "kinds[1].price_per_s: must be a finite number");
  check_refused(R"("price_per_s": 1.6)", R"("price_per_s": -1)", "kinds[1].price_per_s: must be >= 0");
  check_refused(R"("price_per_s": 1.6)", R"("price_per_s": "x")", "kinds[1].price_per_s: not a number");
  check_refused(R"({"name": "fast")", R"({"name": "c5")", "kinds[1].name: a second kind named 'c5'");
  check_refused(R"("name": "bulk")", R"("name": "interactive")", "classes[1].name: a second class named");
  check_refused(R"("slo_ms": 500)", R"("slo_ms": 0)", "'bulk'.slo_ms: must be > 0");
  check_refused(R"("max_violation": 0.02)", R"("max_violation": 1)", "'interactive'.max_violation: must be in (0, 1)");
  check_refused(R"("min_accuracy": 0.7)", R"("min_acuracy": 0.7)", "classes[1].min_acuracy: unknown field");
  check_refused(R"("profiles": "image-c5.json", )", "", "kinds[0].profiles: missing");
  check_refused(R"({"name": "bulk", "slo_ms": 500, "share": 0.3, "min_accuracy": 0.7,
     "workers": {"c5": 3}, "weights": {"c5": 1}})",
                R"({"name": "bulk", "slo_ms": 500, "share": 0.3, "weights": {"c5": 1}})",
                "'bulk'.weights: fixed weights need the class's workers");
  check_refused("\"kinds\": [", "\"kinds\": 3, \"k\": [", "fleet.k: unknown field");
}

TEST_CASE("a fleet description that is not JSON names the file") {
  const std::string path = write_fleet("broken.json", "{\"kinds\": [");
  CHECK_THROWS_WITH(read_fleet_description(path), Contains(path));
}

TEST_CASE("a class may leave its workers to lull plan, and require_workers names it") {
  std::string text = kGood;
  const std::string given = R"(, "min_accuracy": 0.7,
     "workers": {"c5": 3}, "weights": {"c5": 1})";
  REQUIRE(text.find(given) != std::string::npos);
  text.replace(text.find(given), given.size(), "");
  const std::string path = write_fleet("plan.json", text);
  const auto f = read_fleet_description(path);
  CHECK(f.classes[1].workers.empty());
  CHECK_THROWS_WITH(require_workers(f), Contains(path + ": classes[1] 'bulk'.workers: the class has no workers"));
}
