#include "compiler/plan/memory_subsets.h"

#include <algorithm>
#include <stdexcept>

#include "schema/number_text.h"

namespace lull::compiler {

std::vector<std::vector<int>> maximal_subsets_within(const ReducedProfiles& profiles, double budget_mb) {
  const int n = static_cast<int>(profiles.models.size());
  if (n > 20) throw std::invalid_argument("--worker-memory-mb: at most 20 models can be planned over (got " + std::to_string(n) + "; use --models)");
  int smallest = 0;
  for (int i = 0; i < n; ++i) {
    const auto& m = profiles.models[static_cast<std::size_t>(i)];
    if (!(m.memory_mb > 0))
      throw std::invalid_argument("--worker-memory-mb: model " + m.name +
                                  " has no memory_mb in its profile (measure it with lull profile, or write it in the profile JSON)");
    if (m.memory_mb < profiles.models[static_cast<std::size_t>(smallest)].memory_mb) smallest = i;
  }
  const auto& small = profiles.models[static_cast<std::size_t>(smallest)];
  if (budget_mb < small.memory_mb)
    throw std::invalid_argument("--worker-memory-mb " + number_text(budget_mb) + " is below the smallest model's memory (" +
                                small.name + ": " + number_text(small.memory_mb) + " MiB)");
  std::vector<std::vector<int>> out;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    double used = 0;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) used += profiles.models[static_cast<std::size_t>(i)].memory_mb;
    if (used > budget_mb) continue;
    bool maximal = true;
    for (int i = 0; i < n && maximal; ++i)
      if (!(mask & (1u << i)) && used + profiles.models[static_cast<std::size_t>(i)].memory_mb <= budget_mb) maximal = false;
    if (!maximal) continue;
    std::vector<int> subset;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) subset.push_back(i);
    out.push_back(std::move(subset));
  }
  // Subsets holding faster models first: they tend to need the fewest
  // workers, which lets the planner rule out the others with one solve each.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

ReducedProfiles restrict_models(const ReducedProfiles& profiles, const std::vector<int>& models) {
  ReducedProfiles out = profiles;
  out.models.clear();
  for (int i : models) out.models.push_back(profiles.models[static_cast<std::size_t>(i)]);
  return out;
}

}  // namespace lull::compiler
