// Without a GPU (like CI): --device cuda fails with one line naming the
// missing CUDA device (exit 2); --device auto falls back to the CPU and says
// so. With a GPU, auto picks CUDA.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "compiler/solver/solver_registry.h"
#include "test/support/cli_runner.h"
#include "test/support/skip.h"

using Catch::Matchers::Contains;

TEST_CASE("solver selection by device name", "[cuda][device-absent]") {
  std::string why;
  std::ostringstream log;
  if (lull::compiler::cuda_device_available(&why)) {
    WARN("a CUDA device is present: checking that auto picks it");
    CHECK(lull::compiler::make_solver("auto", &log)->name() == "cuda");
    CHECK(lull::compiler::make_solver("cuda", nullptr)->name() == "cuda");
    return;
  }
  CHECK_FALSE(why.empty());
  CHECK_THROWS_WITH(lull::compiler::make_solver("cuda", nullptr), Contains("CUDA"));
  const auto solver = lull::compiler::make_solver("auto", &log);
  CHECK(solver->name() == "cpu");
  CHECK(log.str().empty());  // auto without a GPU is silent: no CUDA noise on a CPU-only machine
  CHECK(lull::compiler::make_solver("cpu", nullptr)->name() == "cpu");
  CHECK_THROWS_WITH(lull::compiler::make_solver("tpu", nullptr), Contains("unknown device"));
}

TEST_CASE("lull compile --device cuda without a GPU: one line, exit 2", "[cuda][device-absent][cli][process]") {
  if (lull::compiler::cuda_device_available(nullptr)) {
    LULL_SKIP("a CUDA device is present");
  }
  const std::string tiny = std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json";
  const std::string out = lull::test::temp_dir() + "/cuda_absent.pb";
  std::filesystem::remove(out);
  const std::string common = "compile --profiles " + tiny + " --slo-ms 100 --workers 2 --load-qps 50 --out " + out;
  const auto r = lull::test::run_lull(common + " --device cuda");
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(lull::test::count_lines(r.err) == 1);
  CHECK_THAT(r.err, Contains("CUDA"));
  CHECK_FALSE(std::filesystem::exists(out));

  const auto a = lull::test::run_lull(common + " --device auto");
  INFO("stderr: " << a.err);
  CHECK(a.exit_code == 0);
  CHECK_THAT(a.err, Contains("cpu solver"));  // the last line names the solver; no CUDA noise before it
  CHECK_FALSE(a.err.find("CUDA") != std::string::npos);
  CHECK(std::filesystem::exists(out));
}
