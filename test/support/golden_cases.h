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

// The golden configuration (SLO 150 ms, 60 workers, 2000 QPS) with another
// batching or slack discretization: no reference numbers, used to compare
// executors and batchings.
inline compiler::MdpOptions golden_profile_options(compiler::Batching batching, compiler::Discretization disc) {
  compiler::MdpOptions o;
  o.slo_us = 150000;
  o.workers = 60;
  o.load_qps = 2000;
  o.batching = batching;
  o.discretization = disc;
  return o;
}

inline std::vector<compiler::MdpOptions> golden_mdp_options() {
  std::vector<compiler::MdpOptions> out;
  for (const auto& g : golden_records()) out.push_back(golden_mdp_options(g));
  return out;
}

}  // namespace lull::test
