// The loader refuses corrupt, truncated and mismatched policy sets with a
// message naming the file and the problem.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "runtime/core/policy_loader.h"
#include "schema/atomic_file.h"
#include "schema/policy_file.h"
#include "test/support/runtime_test_support.h"

namespace {

using Catch::Matchers::Contains;
using lull::core::load_policy_table;
using lull::core::policy_table_from_proto;

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "lull_runtime_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace

TEST_CASE("a sealed policy set loads into flat tables", "[runtime][loader]") {
  const std::string path = temp_path("tiny_ok.pb");
  lull::write_policy_set(lull::test::tiny_policy_set(), path);
  const auto t = load_policy_table(path, {"tiny", 2, 150});
  CHECK(t.slo_us == 150'000);
  CHECK(t.workers == 2);
  REQUIRE(t.policies.size() == 2);
  CHECK(t.policies[1].load_qps == 200);
  CHECK(t.policies[0].actions.size() == 7);
  CHECK(t.policies[0].actions[6].batch == 3);
  CHECK(t.models[1].latency_us[2] == 80'000);
}

TEST_CASE("corrupt and truncated files are refused", "[runtime][loader]") {
  const std::string path = temp_path("tiny_bad.pb");
  lull::write_policy_set(lull::test::tiny_policy_set(), path);
  std::string bytes = lull::read_whole_file(path);
  SECTION("flipped byte") {
    bytes[bytes.size() / 2] ^= 0x01;
    lull::write_file_atomically(path, bytes);
    CHECK_THROWS_WITH(load_policy_table(path, {}), Contains(path));
  }
  SECTION("truncated") {
    lull::write_file_atomically(path, bytes.substr(0, bytes.size() / 3));
    CHECK_THROWS_WITH(load_policy_table(path, {}), Contains(path));
  }
  SECTION("missing") { CHECK_THROWS_WITH(load_policy_table(temp_path("none.pb"), {}), Contains("none.pb")); }
}

TEST_CASE("worker count, SLO and task must match what the caller runs", "[runtime][loader]") {
  const auto set = lull::test::tiny_policy_set();
  CHECK_THROWS_WITH(policy_table_from_proto(set, {"", 60, 0}, "f.pb"),
                    Contains("compiled for 2 workers") && Contains("f.pb"));
  CHECK_THROWS_WITH(policy_table_from_proto(set, {"", 0, 100}, "f.pb"), Contains("SLO 150 ms"));
  CHECK_THROWS_WITH(policy_table_from_proto(set, {"image", 0, 0}, "f.pb"), Contains("task 'tiny'"));
  CHECK_NOTHROW(policy_table_from_proto(set, {"tiny", 2, 150}, "f.pb"));
}

TEST_CASE("structural problems are named", "[runtime][loader]") {
  auto set = lull::test::tiny_policy_set();
  SECTION("short action table") {
    set.mutable_policies(0)->mutable_action_model()->RemoveLast();
    set.mutable_policies(0)->mutable_action_batch()->RemoveLast();
    CHECK_THROWS_WITH(policy_table_from_proto(set, {}, "f.pb"), Contains("policies[0]") && Contains("N*(J+1)+1"));
  }
  SECTION("batch larger than the queue") {
    set.mutable_policies(1)->set_action_batch(0, 2);  // state (1,0) cannot serve 2
    CHECK_THROWS_WITH(policy_table_from_proto(set, {}, "f.pb"), Contains("policies[1].action_batch[0]"));
  }
  SECTION("loads out of order") {
    set.mutable_policies(1)->mutable_inputs()->set_load_qps(50);
    CHECK_THROWS_WITH(policy_table_from_proto(set, {}, "f.pb"), Contains("ascending"));
  }
  SECTION("grid not starting at zero") {
    set.mutable_policies(0)->set_slack_grid_us(0, 5);
    CHECK_THROWS_WITH(policy_table_from_proto(set, {}, "f.pb"), Contains("slack_grid_us"));
  }
  SECTION("a model name with a newline stays on one line (fuzz: test/fuzz/policy_loader_fuzz.cc)") {
    set.mutable_models(1)->set_name("slow\nline");
    set.mutable_models(1)->mutable_latency_us()->RemoveLast();
    try {
      policy_table_from_proto(set, {}, "f.pb");
      FAIL("loaded");
    } catch (const std::runtime_error& e) {
      CHECK_THAT(e.what(), Contains("slow\\nline") && !Contains("\n"));
    }
  }
  SECTION("latency table too short for N+1") {
    set.mutable_models(1)->mutable_latency_us()->RemoveLast();
    CHECK_THROWS_WITH(policy_table_from_proto(set, {}, "f.pb"), Contains("slow"));
  }
}

TEST_CASE("the arrival process is read back, and one the loader cannot name is refused",
          "[runtime][loader][arrivals]") {
  auto set = lull::test::tiny_policy_set();
  CHECK(policy_table_from_proto(set, {}, "f.pb").arrivals.kind == lull::ArrivalProcess::Kind::kPoisson);
  auto with = [&](const std::string& set_arrivals, const std::string& policy_arrivals) {
    auto s = set;
    s.set_arrivals(set_arrivals);
    for (auto& p : *s.mutable_policies()) p.mutable_inputs()->set_arrivals(policy_arrivals);
    return s;
  };
  const auto gamma = policy_table_from_proto(with("gamma:4", "gamma:4"), {}, "f.pb");
  CHECK(gamma.arrivals.kind == lull::ArrivalProcess::Kind::kGamma);
  CHECK(gamma.arrivals.cv2 == 4);
  CHECK_THROWS_WITH(policy_table_from_proto(with("weibull:2", "weibull:2"), {}, "f.pb"),
                    Contains("f.pb") && Contains("unknown arrival process") && Contains("weibull:2"));
  CHECK_THROWS_WITH(policy_table_from_proto(with("uniform", "uniform"), {}, "f.pb"),
                    Contains("unknown arrival process"));
  CHECK_THROWS_WITH(policy_table_from_proto(with("batch:4", "gamma:4"), {}, "f.pb"),
                    Contains("policies[0].inputs.arrivals 'gamma:4' differs from the set's 'batch:4'"));
}
