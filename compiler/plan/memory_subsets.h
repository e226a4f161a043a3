#pragma once
// When each worker has a memory budget, it cannot load every model: the
// planner picks the subset of models (the same on every worker) that needs
// the fewest workers at the load, and among those the one with the highest
// expected accuracy at that count. Candidates are the maximal subsets that
// fit (no further model fits beside them): a model left out though it fits
// would only lower the accuracy a policy can reach. (It can lower the worker
// count too: the policy maximizes accuracy against a violation penalty, and
// with fewer slow models it takes fewer risks; the planner does not search
// below the maximal subsets, which would be 2^n compiles.)
#include <string>
#include <vector>

#include "compiler/profile/model_table.h"

namespace lull::compiler {

// Indices into profiles.models of every maximal subset whose memory_mb sum is
// at most budget_mb, fastest-model subsets first. Throws std::invalid_argument
// naming the model when a memory_mb is missing (0), and naming the smallest
// model when it alone does not fit.
std::vector<std::vector<int>> maximal_subsets_within(const ReducedProfiles& profiles, double budget_mb);

// The most models a variant plan searches over: its candidates are every
// subset holding model 0, 2^(n-1) of them, each compiled at every load.
constexpr int kMaxVariantModels = 12;

// Indices into profiles.models of every subset that holds model 0 (the
// fastest: the Dispatcher's fallback and retry model, which every model
// variant keeps) and whose memory_mb sum is at most budget_mb (budget 0: every
// such subset), by bit pattern (so {0} first). Throws std::invalid_argument
// for more than kMaxVariantModels models, a missing memory_mb (with a budget),
// or a budget below model 0's memory.
std::vector<std::vector<int>> subsets_with_fastest_within(const ReducedProfiles& profiles, double budget_mb);

// The profiles restricted to `models` (order kept: fastest first).
ReducedProfiles restrict_models(const ReducedProfiles& profiles, const std::vector<int>& models);

}  // namespace lull::compiler
