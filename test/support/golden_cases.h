#pragma once
// The golden cases' MDP settings (../shared/golden/image_fld100_max.json),
// for golden_test.cc and for tests that compare executors with each other.
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "test/support/shared_data.h"
#include "test/support/golden_records.h"

namespace lull::test {

// The MDP options of one golden case (the rest at MdpOptions' defaults, as
// the reference ran them).
inline compiler::MdpOptions golden_mdp_options(const GoldenRecord& g) {
  compiler::MdpOptions o;
  o.slo_us = g.slo_ms * 1000;
  o.workers = g.workers;
  o.load_qps = g.load_qps;
  return o;
}

inline std::vector<compiler::MdpOptions> golden_mdp_options() {
  std::vector<compiler::MdpOptions> out;
  for (const auto& g : golden_records()) out.push_back(golden_mdp_options(g));
  return out;
}

}  // namespace lull::test
