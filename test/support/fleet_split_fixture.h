#pragma once
// A two-kind class whose libraries hold counts 1..3 at the loads a weight
// grid of 1/4 sends at class load 100 (25, 50, 75, 100), each policy's
// expectation a function of the load per worker only (accuracy falls,
// violation rises with it); the fastest model carries 1000 qps a worker. The
// file's counts are 1 and 1, split 50/50. Tests of the split re-searched for
// the counts up (runtime/core/fleet_split.h) and of the front end following them.
#include <vector>

#include "runtime/core/fleet_tables.h"

namespace lull::test {

inline core::PolicyTable split_fixture_set(int workers, const std::vector<double>& loads) {
  core::PolicyTable t;
  t.workers = workers;
  t.models.push_back({"m", 0.9, {1000.0}});
  for (double l : loads) {
    core::CompiledPolicy p;
    p.load_qps = l;
    p.max_queue = 1;
    const double per_worker = l / workers;
    p.expected_accuracy = 0.9 - 0.002 * per_worker;
    p.expected_violation_rate = 0.0001 * per_worker;
    t.policies.push_back(p);
  }
  return t;
}

// `loads`: those compiled ({25, 50, 75, 100}: the 1/4 grid; {50}: fixed 50/50 weights).
inline core::FleetClassTables split_fixture_class(const std::vector<double>& loads = {25, 50, 75, 100}) {
  core::FleetClassTables c;
  c.name = "interactive";
  c.max_violation = 0.01;
  for (const char* name : {"a", "b"}) {
    core::FleetKindTables k;
    k.kind = name;
    k.workers = 1;
    for (int w = 1; w <= 3; ++w) k.library.push_back(split_fixture_set(w, loads));
    c.kinds.push_back(k);
  }
  c.splits = {{100, {0.5, 0.5}, 0.8, 0.005}};
  return c;
}

}  // namespace lull::test
