// ProgressLine: carriage returns on a terminal only; a log gets one plain
// line per step and none of the transient updates.
#include <catch2/catch.hpp>
#include <sstream>

#include "cli/progress_line.h"

using lull::cli::ProgressLine;

TEST_CASE("progress: not a terminal: a line per step, no carriage return", "[cli][progress]") {
  std::ostringstream err;
  ProgressLine p(err, false);
  p.update("3% of 100");
  p.step("model a batch 1/2");
  p.update("60% of 100");
  p.step("model a batch 2/2");
  p.line("model a: median ms b1 2.0 b2 3.0");
  CHECK(err.str() == "model a batch 1/2\nmodel a batch 2/2\nmodel a: median ms b1 2.0 b2 3.0\n");
}

TEST_CASE("progress: a terminal: one line rewritten in place, padded over longer text", "[cli][progress]") {
  std::ostringstream err;
  ProgressLine p(err, true);
  p.update("longer text");
  p.step("short");
  p.line("done");
  CHECK(err.str() == "\rlonger text\rshort      \rdone \n");
}
