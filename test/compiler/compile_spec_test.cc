// The compile spec is recorded faithfully: a policy states the settings it
// was compiled with, including the solver mode (reference or the settings
// that differ), and the compile report times every phase of the command.
#include <catch2/catch.hpp>

#include "compiler/compile_spec.h"
#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

using lull::compiler::Batching;
using lull::compiler::CompileSpec;
using lull::compiler::Discretization;

namespace {

const std::string kTiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";

lull::schema::PolicySet compile_tiny(const std::string& name, const std::string& extra) {
  const std::string out = lull::test::temp_dir() + "/" + name;
  const auto r =
      lull::test::run_lull("compile --profiles " + kTiny +
                           " --slo-ms 100 --workers 2 --load-qps 50,80 --device cpu --out " + out + " " + extra);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return lull::read_policy_set(out);
}

}  // namespace

TEST_CASE("solver mode: reference, or the settings that differ from it", "[compiler][spec]") {
  CompileSpec s;
  CHECK(lull::compiler::solver_mode(s) == "reference");
  s.mdp.discretization = Discretization::kMd;
  CHECK(lull::compiler::solver_mode(s) == "md");
  s.mdp.batching = Batching::kVariable;
  CHECK(lull::compiler::solver_mode(s) == "md+variable-batching");
  CompileSpec t;
  t.mdp.intervals = 10;
  t.mdp.max_queue = 8;
  t.reduction.percentile = 99;
  t.solve.horizon = 200;
  CHECK(lull::compiler::solver_mode(t) == "intervals=10+max-queue=8+percentile=99+horizon=200");
}

TEST_CASE("policies record the settings they were compiled with", "[compiler][spec][cli]") {
  struct Case {
    std::string flags, mode;
    lull::schema::Discretization grid;
    unsigned intervals, max_queue;
    lull::schema::Batching batching;
    unsigned horizon;
    double percentile;
  };
  const std::vector<Case> cases{
      {"--max-queue 32", "reference", lull::schema::FLD, 100, 32, lull::schema::MAXIMAL, 100, 95},
      {"--md --max-queue 8", "md+max-queue=8", lull::schema::MD, 0, 8, lull::schema::MAXIMAL, 100, 95},
      {"--batching variable --max-queue 32 --horizon 50 --percentile 90", "variable-batching+percentile=90+horizon=50",
       lull::schema::FLD, 100, 32, lull::schema::VARIABLE, 50, 90},
      {"--md --batching variable --max-queue 32", "md+variable-batching", lull::schema::MD, 0, 32,
       lull::schema::VARIABLE, 100, 95},
  };
  int n = 0;
  for (const auto& c : cases) {
    INFO(c.flags);
    const auto set = compile_tiny("spec" + std::to_string(n++) + ".pb", c.flags);
    REQUIRE(set.policies_size() == 2);
    for (const auto& p : set.policies()) {
      CHECK(p.inputs().solver_mode() == c.mode);
      CHECK(p.inputs().discretization() == c.grid);
      CHECK(p.inputs().intervals() == c.intervals);
      CHECK(p.inputs().max_queue() == c.max_queue);
      CHECK(p.inputs().batching() == c.batching);
      CHECK(p.inputs().horizon() == c.horizon);
      CHECK(p.inputs().percentile() == c.percentile);
    }
  }
}

TEST_CASE("compile: the report and the last line give the phases and the process's wall time",
          "[compiler][spec][cli]") {
  const std::string out = lull::test::temp_dir() + "/phases.pb";
  const auto r = lull::test::run_lull("compile --profiles " + kTiny +
                                      " --slo-ms 100 --workers 2 --load-qps 50 --max-queue 8 --device cpu --out " +
                                      out + " --report -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* key : {"\"phase_seconds\"", "\"setup\"", "\"read\"", "\"validate\"", "\"reduce\"", "\"solve\"",
                          "\"write\"", "\"total_seconds\""})
    CHECK(r.out.find(key) != std::string::npos);
  CHECK(r.err.find("wrote 1 policies to " + out + " in ") != std::string::npos);
  for (const char* phase : {"(read ", ", validate ", ", reduce ", ", solve ", "; cpu solver)"})
    CHECK(r.err.find(phase) != std::string::npos);
}
