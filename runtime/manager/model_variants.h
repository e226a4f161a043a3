#pragma once
// Model variants: under a per-worker memory budget the plan holds
// a smaller model set at high load and the full set at low load. Each set has
// its policies, compiled for exactly its models (`lull compile --models`).
// This file is the pure part: which set serves a load (with hysteresis, so a
// load hovering at a boundary does not load and unload models back and
// forth), and a subset's policy table restated over the full set's model
// list, so that the running Dispatcher (whose model ids are the full set's)
// can take it through PolicyCatalog::replace.
#include <string>
#include <vector>

#include "runtime/core/policy_table.h"

namespace lull::manager {

// The model names of a table, in its order.
std::vector<std::string> model_names(const core::PolicyTable& table);

// `subset`'s policies with each action's model id mapped to the same-named
// model of `full`; task, SLO, worker count and models (latencies included)
// are `full`'s, so the result differs from `full` only in which models its
// policies pick. Throws std::invalid_argument naming `what` when task, SLO
// or worker count differ, a model is not in `full`, or the subset lacks
// full's model 0 (the Dispatcher's fallback and retry model must stay loaded).
core::PolicyTable widen_policy_table(const core::PolicyTable& subset, const core::PolicyTable& full,
                                     const std::string& what);

// The same for a policy library (one table per worker count): `subset[i]`
// widened against the full library's table with the same worker count.
// Throws std::invalid_argument naming `what` when the worker counts differ.
std::vector<core::PolicyTable> widen_policy_library(const std::vector<core::PolicyTable>& subset,
                                                    const std::vector<core::PolicyTable>& full,
                                                    const std::string& what);

// Which variant serves `load_qps`: variant i serves from `from_qps[i]` up
// (ascending; from_qps[0] == 0, the full set). Moving to a higher variant
// happens at its boundary; moving back down only once the load is below the
// current variant's boundary by the fraction `hysteresis`.
int choose_variant(const std::vector<double>& from_qps, int current, double load_qps, double hysteresis);

}  // namespace lull::manager
