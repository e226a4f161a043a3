#pragma once
// The golden cases' MDP settings (../shared/golden/image_fld100_max.json),
// for tests that compare backends with each other rather than with the
// reference's numbers (test/compiler/golden_test.cc does that).
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "test/compiler/test_support.h"
#include "test/golden_records.h"

namespace lull::test {

inline std::vector<compiler::MdpOptions> golden_mdp_options() {
  std::vector<compiler::MdpOptions> out;
  for (const auto& g : golden_records()) {
    compiler::MdpOptions o;
    o.slo_us = g.slo_ms * 1000;
    o.workers = g.workers;
    o.load_qps = g.load_qps;
    out.push_back(o);
  }
  return out;
}

}  // namespace lull::test
