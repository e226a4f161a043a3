#pragma once
// The synthetic model sets of the RAMSIS paper (section 7.3.2): new models
// placed by linear interpolation along the accuracy/latency Pareto front of
// measured ones, in fixed accuracy steps. From the 9 Pareto image models at
// 0.5-point steps this gives the paper's 60-model set.
//
// Stepping: between each pair of neighbouring Pareto models (accuracies
// a0 < a1) new models sit at a0 + k * step for k = 1, 2, ... while
// a0 + k * step < a1 (less a 1e-9 guard, so a step that lands on a1 adds no
// duplicate of the upper model). Stepping restarts at every Pareto model, as
// the paper's count of 60 requires (a global grid would give 65).
// Latencies: lat(b) = (1 - w) lat_lo(b) + w lat_hi(b), w = (a - a0) / (a1 - a0),
// per batch size, on the reduced tables.
#include <string>
#include <vector>

#include "compiler/profile/model_table.h"
#include "schema/profile.pb.h"

namespace lull::compiler {

struct InterpolationOptions {
  double step = 0.005;              // accuracy step, as a fraction (0.005 = 0.5 points)
  double percentile = 95;           // latency percentile the originals are reduced at
  int profiled_batches = 32;        // batch sizes 1..B written for each new model
  std::vector<std::string> models;  // interpolate between these (empty: all models)
};

// Name of the model interpolated at accuracy `a`: "interp_0.7450".
std::string interpolated_model_name(double accuracy);

// The given models plus the interpolated ones, fastest at batch 1 first. The
// given models are returned unchanged; interpolation runs along their Pareto
// front (pareto_front in profile_reduction.h). Every table must have the same
// length. Throws std::invalid_argument for a step <= 0.
std::vector<ModelTable> interpolate_pareto_front(const std::vector<ModelTable>& models, double step);

// The same on a profile set: the chosen originals are copied exactly (raw
// samples and all), each interpolated model gets one reduced latency per batch
// size 1..profiled_batches, and the set is marked synthetic with a provenance
// line saying how it was made. `where` names the source in error messages.
schema::ProfileSet interpolate_profile_set(const schema::ProfileSet& set, const InterpolationOptions& options,
                                           const std::string& where);

}  // namespace lull::compiler
