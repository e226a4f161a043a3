#pragma once
// Validates a profile set (naming the file and field of the first problem) and
// reduces it to ReducedProfiles: one latency per batch size, models sorted by
// batch-1 latency, optionally restricted to named models or pruned to the
// accuracy/latency Pareto front.
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/profile/model_table.h"
#include "schema/profile.pb.h"

namespace lull::compiler {

struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ReductionOptions {
  double percentile = 95;
  std::vector<std::string> models;  // keep exactly these (empty: all, then Pareto unless keep_all)
  bool keep_all_models = false;     // skip Pareto pruning
};

// `where` names the source (file or folder) in error messages. Latencies must
// be within schema/latency_limit.h's bound for `slo_ms` (0: no SLO known).
void validate_profile_set(const schema::ProfileSet& set, const std::string& where, double slo_ms = 0);

// Validates, then reduces to lat(m, b) for b = 1..max_queue+1 (N is the MDP's).
ReducedProfiles reduce_profiles(const schema::ProfileSet& set, const ReductionOptions& opts, int max_queue,
                                const std::string& where);
// The same for a set validate_profile_set has accepted (the compiler times the two apart).
ReducedProfiles reduce_valid_profiles(const schema::ProfileSet& set, const ReductionOptions& opts, int max_queue,
                                      const std::string& where);

// Indices (into `models`) of the Pareto front: a model is dropped when some
// other model is at least as fast at batch 1 and at least as accurate, and
// strictly better in one of the two.
std::vector<int> pareto_front(const std::vector<ModelTable>& models);

}  // namespace lull::compiler
