// Online compilation's compiler side: the settings a policy set records are
// enough to compile, on demand, exactly the policy `lull compile` wrote for
// that (workers, load); results are cached.
#include <catch2/catch.hpp>

#include "compiler/emit/recorded_spec.h"
#include "compiler/online/online_compiler.h"
#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

lull::schema::PolicySet compile_cli(const std::string& name, const std::string& args) {
  const std::string out = lull::test::temp_dir() + "/" + name;
  const auto r = lull::test::run_lull("compile --profiles " + kTiny + " --device cpu --out " + out + " " + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return lull::read_policy_set(out);
}

void same_policy(const lull::schema::Policy& a, const lull::schema::Policy& b) {
  CHECK(a.inputs().SerializeAsString() == b.inputs().SerializeAsString());
  CHECK(std::vector<unsigned>(a.action_model().begin(), a.action_model().end()) ==
        std::vector<unsigned>(b.action_model().begin(), b.action_model().end()));
  CHECK(std::vector<unsigned>(a.action_batch().begin(), a.action_batch().end()) ==
        std::vector<unsigned>(b.action_batch().begin(), b.action_batch().end()));
  CHECK(a.expected().accuracy() == b.expected().accuracy());
  CHECK(a.expected().violation_rate() == b.expected().violation_rate());
}

}  // namespace

TEST_CASE("an online policy is the one lull compile writes with the library's recorded settings",
          "[compiler][online][process]") {
  // Non-default settings everywhere, so a setting not carried over shows.
  const std::string settings =
      "--slo-ms 60 --load-qps 90,160 --max-queue 6 --intervals 12 --batching variable --horizon 80 "
      "--percentile 90";
  const auto library = compile_cli("online_lib.pb", settings + " --workers 3");
  const auto two = compile_cli("online_two.pb", settings + " --workers 2");
  const auto spec = lull::compiler::recorded_compile_spec(library, {kTiny, "", ""}, "cpu");
  lull::compiler::OnlineCompiler online(spec);
  const auto got3 = online.compile(3, 160);
  REQUIRE(got3.policies_size() == 1);
  CHECK(got3.workers() == 3);
  same_policy(got3.policies(0), library.policies(1));
  const auto got2 = online.compile(2, 90);  // a worker count the library does not hold
  CHECK(got2.workers() == 2);
  same_policy(got2.policies(0), two.policies(0));
  CHECK(online.compilations() == 2);
  online.compile(3, 160);  // cached
  CHECK(online.compilations() == 2);
}

TEST_CASE("recorded_compile_spec refuses a set that records no settings", "[compiler][online]") {
  lull::schema::PolicySet empty;
  CHECK_THROWS_WITH(lull::compiler::recorded_compile_spec(empty, {kTiny, "", ""}, "cpu"), Catch::Contains("no policy"));
  lull::schema::PolicySet unrecorded;
  unrecorded.add_policies();
  CHECK_THROWS_WITH(lull::compiler::recorded_compile_spec(unrecorded, {kTiny, "", ""}, "cpu"),
                    Catch::Contains("discretization"));
  // The drift recompiler reads the same fields: no default percentile for a set that records none.
  auto* in = unrecorded.mutable_policies(0)->mutable_inputs();
  in->set_discretization(lull::schema::FLD);
  in->set_batching(lull::schema::MAXIMAL);
  CHECK_THROWS_WITH(lull::compiler::recorded_compile_spec(unrecorded, {kTiny, "", ""}, "cpu"),
                    Catch::Contains("policies[0].inputs.percentile: not recorded"));
  in->set_percentile(99);
  CHECK(lull::compiler::recorded_compile_spec(unrecorded, {kTiny, "", ""}, "cpu").reduction.percentile == 99);
}

TEST_CASE("a cancelled online compiler abandons the compilation and every later one", "[compiler][online]") {
  lull::compiler::CompileSpec spec;
  spec.inputs = {kTiny, "", ""};
  spec.device = "cpu";
  spec.mdp.slo_us = 60000;
  spec.mdp.workers = 2;
  spec.loads_qps = {90};
  lull::compiler::OnlineCompiler online(spec);
  const auto before = online.compile(2, 90);  // not cancelled: compiles
  CHECK(before.policies_size() == 1);
  online.cancel();
  CHECK_THROWS_AS(online.compile(3, 90), lull::compiler::SolveCancelled);
  CHECK_THROWS_AS(online.compile(2, 90), lull::compiler::SolveCancelled);  // even a cached one: the server stops
  CHECK(online.compilations() == 1);
}
