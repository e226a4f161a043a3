#pragma once
// A class's split re-searched for the worker counts up (docs/operators-guide.md "The
// split when the counts change"). The file's splits were searched for its
// counts; when the autoscaler or the health checks change a kind's count,
// the split for the counts up is searched again, by the same search as lull
// compile --fleet (schema/split_search.h: the most accurate split whose
// violation meets the class's target, else the least violation), over the
// expectations the file's libraries record for those counts, at the loads the
// compile's weight grid sent each kind. A kind with no worker up gets weight
// 0. Where a library lacks a count (or the grid cannot be recovered: fixed
// weights), the file's splits stay, and `fallback` says why.
#include <string>
#include <vector>

#include "runtime/core/fleet_tables.h"

namespace lull::core {

// The weight grid's steps (1 / --weight-step) the file's libraries were
// compiled for: the finest n in 2..1000 such that every kind's set for its
// file count holds a policy at w x L for every split load L and w = 1/n ..
// 1; 0 when none does (fixed weights: nothing to re-search over).
int compiled_weight_steps(const FleetClassTables& cls);

struct ClassResplit {
  std::vector<FleetSplitPoint> splits;  // at the file's split loads
  // When searched: the file's weights on the counts up, by the same
  // expectations (what re-searching gained).
  std::vector<FleetSplitPoint> file_weights;
  bool searched = false;  // false: the file's splits (fallback says why)
  std::string fallback;
};

// `counts[k]`: the workers of kind k up now. The counts of the file give the
// file's splits (searched = false, no fallback).
ClassResplit resplit_for_counts(const FleetClassTables& cls, const std::vector<int>& counts);

}  // namespace lull::core
