// The Table 2 grid runner on a small grid: every cell runs on the CPU, a CUDA
// column without a device holds the reason instead of numbers, and the
// markdown table has one row per cell.
#include <catch2/catch.hpp>

#include "compiler/bench/table2_grid.h"
#include "compiler/solver/solver_registry.h"
#include "test/cuda/small_problems.h"

using Catch::Matchers::Contains;

TEST_CASE("Table 2 grid on small hand-made models", "[bench][table2]") {
  lull::compiler::Table2Options o;
  o.mdp.slo_us = 60000;
  o.mdp.workers = 4;
  o.mdp.load_qps = 160;
  o.mdp.max_queue = 6;
  o.fld_intervals = {10};
  o.interpolation_step = 0.05;
  o.devices = {"cpu", "cuda"};
  const auto given = lull::test::linear_models(3, 6);  // accuracies 0.6, 0.725, 0.85
  const auto cells = lull::compiler::run_table2_grid(given, o, nullptr);
  // {3 given, 3 + 4 interpolated} x {FLD 10, MD} x {maximal, variable} x 2 devices.
  REQUIRE(cells.size() == 2 * 2 * 2 * 2);
  const bool have_gpu = lull::compiler::cuda_device_available(nullptr);
  int interpolated_rows = 0;
  for (const auto& c : cells) {
    INFO(c.models << " " << c.scheme << " " << c.batching << " " << c.device << ": " << c.error);
    interpolated_rows += c.models == 7;
    if (c.device == "cpu" || have_gpu) {
      CHECK(c.error.empty());
      CHECK(c.seconds > 0);
      CHECK(c.states > 0);
      CHECK(c.expected_accuracy > 0.5);
      if (c.scheme == "FLD D=10") CHECK(c.states == (6 + 1) * 11 + 1);
    } else {
      CHECK_THAT(c.error, Contains("CUDA"));
    }
  }
  CHECK(interpolated_rows == 8);
  const auto md = lull::compiler::table2_markdown(cells, o.devices);
  CHECK_THAT(md, Contains("| models | slack grid | batching |"));
  CHECK_THAT(md, Contains("| 7 | MD | variable |"));
  if (!have_gpu) CHECK_THAT(md, Contains("n/a"));
  CHECK_FALSE(lull::compiler::table2_device_description("cpu").empty());
}
