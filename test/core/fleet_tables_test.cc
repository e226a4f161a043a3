// Fleet policy files (docs/operators-guide.md): what loads, and each rule the loader
// enforces, with a one-line reason naming class, kind and field.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

#include "runtime/core/fleet_tables.h"
#include "schema/fleet_file.h"
#include "schema/policy_file.h"
#include "test/support/runtime_test_support.h"

namespace {

using Catch::Matchers::Contains;
using lull::core::fleet_tables_from_proto;

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "lull_runtime_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

lull::schema::PolicyLibrary library_of(const lull::schema::PolicySet& set) {
  lull::schema::PolicyLibrary lib;
  *lib.add_sets() = set;
  return lib;
}

// One class "interactive" (the tiny set's 150 ms) with kinds "old" and "new"
// (2 workers each), split 30/70 at 100 qps and 50/50 at 200 qps.
lull::schema::FleetPolicy two_kind_fleet() {
  lull::schema::FleetPolicy fleet;
  auto* c = fleet.add_classes();
  c->set_name("interactive");
  c->set_slo_ms(150);
  c->set_max_violation(0.01);
  c->set_share(1);
  for (const char* name : {"old", "new"}) {
    auto* k = c->add_kinds();
    k->set_kind(name);
    k->set_workers(2);
    k->set_price_per_s(1);
    *k->mutable_library() = library_of(lull::test::tiny_policy_set());
  }
  for (auto [load, w0] : {std::pair{100.0, 0.3}, std::pair{200.0, 0.5}}) {
    auto* s = c->add_splits();
    s->set_load_qps(load);
    s->add_weights(w0);
    s->add_weights(1 - w0);
  }
  lull::seal_fleet_policy(fleet);
  return fleet;
}

void check_refused(lull::schema::FleetPolicy fleet, const std::string& why) {
  lull::seal_fleet_policy(fleet);
  CHECK_THROWS_WITH(fleet_tables_from_proto(fleet, {}, "f.pb"), Contains("f.pb: ") && Contains(why));
}

}  // namespace

TEST_CASE("a fleet policy file round-trips into per-class, per-kind tables", "[runtime][fleet]") {
  const std::string path = temp_path("fleet_ok.pb");
  lull::write_fleet_policy(two_kind_fleet(), path);
  REQUIRE(lull::is_fleet_policy_file(path));
  const auto f = lull::core::load_fleet_tables(path, {"tiny", 0, 0});
  REQUIRE(f.classes.size() == 1);
  const auto& c = f.classes[0];
  CHECK(c.name == "interactive");
  CHECK(c.slo_us == 150000);
  CHECK(c.share == 1);
  REQUIRE(c.kinds.size() == 2);
  CHECK(c.kind_index("new") == 1);
  CHECK(c.kind_index("gpu") == -1);
  CHECK(f.class_index("interactive") == 0);
  CHECK(f.class_index("bulk") == -1);
  CHECK(c.kinds[1].library.at(0).policies.size() == 2);
  // The split for a load: the lowest split load at or above it, else the top.
  CHECK(c.split_at(50).weights[0] == 0.3);
  CHECK(c.split_at(100).weights[0] == 0.3);
  CHECK(c.split_at(150).weights[0] == 0.5);
  CHECK(c.split_at(900).weights[0] == 0.5);
}

TEST_CASE("a policy library is not a fleet file, and a fleet file is not a library", "[runtime][fleet]") {
  const std::string lib_path = temp_path("fleet_not_lib.pb");
  lull::write_policy_library(library_of(lull::test::tiny_policy_set()), lib_path);
  CHECK_FALSE(lull::is_fleet_policy_file(lib_path));
  CHECK_THROWS_WITH(lull::core::load_fleet_tables(lib_path), Contains("not a fleet policy"));
  const std::string fleet_path = temp_path("fleet_as_lib.pb");
  lull::write_fleet_policy(two_kind_fleet(), fleet_path);
  CHECK_THROWS(lull::read_policy_library(fleet_path));
}

TEST_CASE("the fleet loader refuses what the runtime could not serve", "[runtime][fleet]") {
  auto f = two_kind_fleet();
  SECTION("weights that do not sum to one") {
    f.mutable_classes(0)->mutable_splits(1)->set_weights(1, 0.6);
    check_refused(f, "classes[0] 'interactive': splits[1].weights sum to 1.1");
  }
  SECTION("a weight per kind") {
    f.mutable_classes(0)->mutable_splits(0)->add_weights(0);
    check_refused(f, "splits[0].weights has 3 entries for 2 kinds");
  }
  SECTION("a NaN weight") {
    f.mutable_classes(0)->mutable_splits(0)->set_weights(0, std::numeric_limits<double>::quiet_NaN());
    check_refused(f, "each weight must be in [0, 1]");
  }
  SECTION("loads not ascending") {
    f.mutable_classes(0)->mutable_splits(1)->set_load_qps(100);
    check_refused(f, "splits[1].load_qps is not above");
  }
  SECTION("a kind lacking a model the others have") {
    auto* set = f.mutable_classes(0)->mutable_kinds(1)->mutable_library()->mutable_sets(0);
    set->mutable_models(1)->set_name("other");
    lull::seal_policy_set(*set);
    check_refused(f, "kinds[1] 'new' lacks model 'slow' that kinds[0] has");
  }
  SECTION("two kinds of one name") {
    f.mutable_classes(0)->mutable_kinds(1)->set_kind("old");
    check_refused(f, "kinds[1] 'old': a second kind of this name");
  }
  SECTION("a kind whose library lacks its worker count") {
    f.mutable_classes(0)->mutable_kinds(0)->set_workers(3);
    check_refused(f, "kinds[0] 'old'.library has no set for its 3 workers");
  }
  SECTION("a class whose SLO is not its libraries'") {
    f.mutable_classes(0)->set_slo_ms(500);
    check_refused(f, "SLO 150");
  }
  SECTION("a class without workers") {
    f.mutable_classes(0)->clear_kinds();
    check_refused(f, "the class has no worker kinds");
  }
  SECTION("class shares that do not sum to one") {
    f.mutable_classes(0)->set_share(0.7);
    check_refused(f, "f.pb: the classes' shares sum to 0.7");
  }
  SECTION("two classes of one name") {
    *f.add_classes() = f.classes(0);
    check_refused(f, "classes[1] 'interactive': a second class of this name");
  }
  SECTION("a corrupt checksum") {
    f.mutable_classes(0)->set_max_violation(0.5);  // not resealed
    CHECK_THROWS_WITH(fleet_tables_from_proto(f, {}, "f.pb"), Contains("f.pb: checksum mismatch"));
  }
  SECTION("a library of another task") {
    lull::seal_fleet_policy(f);
    CHECK_THROWS_WITH(fleet_tables_from_proto(f, {"image", 0, 0}, "f.pb"), Contains("f.pb: classes[0] 'interactive'"));
  }
}
