// Policy-set files: sealed with version and checksums, verified on read,
// written atomically.
#include <catch2/catch.hpp>
#include <filesystem>

#include "schema/atomic_file.h"
#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

namespace {

lull::schema::PolicySet small_set() {
  lull::schema::PolicySet set;
  set.set_task("t");
  set.set_slo_ms(100);
  set.set_workers(3);
  auto* m = set.add_models();
  m->set_name("m0");
  m->set_accuracy(0.5);
  m->add_latency_us(1000);
  auto* p = set.add_policies();
  p->mutable_inputs()->set_task("t");
  p->mutable_inputs()->set_slo_ms(100);
  p->mutable_inputs()->set_workers(3);
  p->add_action_model(0);
  p->add_action_batch(1);
  return set;
}

}  // namespace

TEST_CASE("a sealed policy set reads back identical", "[schema]") {
  const auto path = lull::test::temp_dir() + "/set.pb";
  lull::write_policy_set(small_set(), path);
  const auto back = lull::read_policy_set(path);
  CHECK(back.format_version() == lull::kPolicyFormatVersion);
  CHECK(back.policies(0).checksum() != 0);
  CHECK(back.models(0).name() == "m0");
}

TEST_CASE("tampering with content, version or consistency is detected", "[schema]") {
  auto set = small_set();
  lull::seal_policy_set(set);
  REQUIRE_NOTHROW(lull::verify_policy_set(set, "x"));
  auto changed = set;
  changed.mutable_policies(0)->set_action_model(0, 0);
  changed.mutable_policies(0)->mutable_expected()->set_accuracy(0.99);
  CHECK_THROWS_WITH(lull::verify_policy_set(changed, "x"), Catch::Contains("checksum"));
  auto old = set;
  old.set_format_version(99);
  CHECK_THROWS_WITH(lull::verify_policy_set(old, "x"), Catch::Contains("format_version"));
  auto mismatched = small_set();
  mismatched.mutable_policies(0)->mutable_inputs()->set_workers(4);
  lull::seal_policy_set(mismatched);
  CHECK_THROWS_WITH(lull::verify_policy_set(mismatched, "x"), Catch::Contains("workers"));
  auto bad_model = small_set();
  bad_model.mutable_policies(0)->set_action_model(0, 7);
  lull::seal_policy_set(bad_model);
  CHECK_THROWS_WITH(lull::verify_policy_set(bad_model, "x"), Catch::Contains("model 7"));
}

TEST_CASE("a failed write leaves neither the target nor a temporary file", "[schema]") {
  const auto dir = lull::test::temp_dir() + "/atomic";
  std::filesystem::create_directories(dir);
  const auto target = dir + "/out.pb";
  lull::write_file_atomically(target, "old");
  // Renaming a file over a directory fails after the data is written.
  const auto blocked = dir + "/blocked";
  std::filesystem::create_directories(blocked + "/inner");
  CHECK_THROWS(lull::write_file_atomically(blocked, "new"));
  CHECK(std::filesystem::is_directory(blocked));
  for (const auto& e : std::filesystem::directory_iterator(dir))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  CHECK(lull::read_whole_file(target) == "old");
}

TEST_CASE("writing to a device writes in place and leaves the device", "[schema]") {
  // --out /dev/null: a rename over it would make /dev/null a regular file
  // (for every process on the machine, when run as root).
  REQUIRE(std::filesystem::is_character_file("/dev/null"));
  lull::write_file_atomically("/dev/null", "bytes");
  CHECK(std::filesystem::is_character_file("/dev/null"));
  for (const auto& e : std::filesystem::directory_iterator("/dev"))
    CHECK(e.path().filename().string().find("null.tmp.") == std::string::npos);
}

namespace {

lull::schema::PolicySet set_for_workers(unsigned workers) {
  auto set = small_set();
  set.set_workers(workers);
  set.mutable_policies(0)->mutable_inputs()->set_workers(workers);
  return set;
}

}  // namespace

TEST_CASE("a policy library reads back per worker count, a set file reads as a library of one", "[schema]") {
  lull::schema::PolicyLibrary lib;
  *lib.add_sets() = set_for_workers(2);
  *lib.add_sets() = set_for_workers(5);
  const auto path = lull::test::temp_dir() + "/lib.pb";
  lull::write_policy_library(lib, path);
  const auto back = lull::read_policy_library(path);
  REQUIRE(back.sets_size() == 2);
  CHECK(back.sets(1).workers() == 5);
  CHECK(back.sets(1).policies(0).checksum() != 0);
  // A library is not a policy set: the set reader refuses it, saying what it
  // is (it said "holds no policies", e.g. for a library delivered by SIGHUP).
  CHECK_THROWS_WITH(lull::read_policy_set(path), path + ": a policy library (2 sets), not a policy set");

  const auto set_path = lull::test::temp_dir() + "/one_set.pb";
  lull::write_policy_set(set_for_workers(3), set_path);
  const auto one = lull::read_policy_library(set_path);
  REQUIRE(one.sets_size() == 1);
  CHECK(one.sets(0).workers() == 3);
}

TEST_CASE("a library with unordered worker counts, mixed SLOs or a damaged set is refused", "[schema]") {
  lull::schema::PolicyLibrary unordered;
  *unordered.add_sets() = set_for_workers(5);
  *unordered.add_sets() = set_for_workers(2);
  lull::seal_policy_library(unordered);
  CHECK_THROWS_WITH(lull::verify_policy_library(unordered, "x"), Catch::Contains("sets[1].workers 2"));

  lull::schema::PolicyLibrary mixed;
  *mixed.add_sets() = set_for_workers(2);
  *mixed.add_sets() = set_for_workers(3);
  mixed.mutable_sets(1)->set_slo_ms(200);
  for (auto& p : *mixed.mutable_sets(1)->mutable_policies()) p.mutable_inputs()->set_slo_ms(200);
  lull::seal_policy_library(mixed);
  CHECK_THROWS_WITH(lull::verify_policy_library(mixed, "x"), Catch::Contains("task/SLO"));

  lull::schema::PolicyLibrary damaged;
  *damaged.add_sets() = set_for_workers(2);
  lull::seal_policy_library(damaged);
  damaged.mutable_sets(0)->mutable_policies(0)->set_action_batch(0, 9);
  CHECK_THROWS_WITH(lull::verify_policy_library(damaged, "x"), Catch::Contains("checksum"));
}
