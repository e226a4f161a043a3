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
