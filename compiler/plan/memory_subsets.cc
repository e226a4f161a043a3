#include "compiler/plan/memory_subsets.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "schema/number_text.h"

namespace lull::compiler {

namespace {

// Every model has a memory_mb and the smallest fits `budget_mb`, or
// std::invalid_argument naming the model; at most `max_models` models.
void check_memory_inputs(const ReducedProfiles& profiles, double budget_mb, int max_models, const std::string& flag) {
  const int n = static_cast<int>(profiles.models.size());
  if (n > max_models)
    throw std::invalid_argument(flag + ": at most " + std::to_string(max_models) + " models can be planned over (got " +
                                std::to_string(n) + "; use --models)");
  int smallest = 0;
  for (int i = 0; i < n; ++i) {
    const auto& m = profiles.models[static_cast<std::size_t>(i)];
    if (!(m.memory_mb > 0))
      throw std::invalid_argument(
          "--worker-memory-mb: model " + m.name +
          " has no memory_mb in its profile (measure it with lull profile, or write it in the profile JSON)");
    if (m.memory_mb < profiles.models[static_cast<std::size_t>(smallest)].memory_mb) smallest = i;
  }
  const auto& small = profiles.models[static_cast<std::size_t>(smallest)];
  if (budget_mb < small.memory_mb)
    throw std::invalid_argument("--worker-memory-mb " + number_text(budget_mb) +
                                " is below the smallest model's memory (" + small.name + ": " +
                                number_text(small.memory_mb) + " MiB)");
}

double memory_of(const ReducedProfiles& profiles, unsigned mask) {
  double used = 0;
  for (std::size_t i = 0; i < profiles.models.size(); ++i)
    if (mask & (1u << i)) used += profiles.models[i].memory_mb;
  return used;
}

std::vector<int> indices_of(unsigned mask, int n) {
  std::vector<int> subset;
  for (int i = 0; i < n; ++i)
    if (mask & (1u << i)) subset.push_back(i);
  return subset;
}

}  // namespace

std::vector<std::vector<int>> maximal_subsets_within(const ReducedProfiles& profiles, double budget_mb) {
  const int n = static_cast<int>(profiles.models.size());
  check_memory_inputs(profiles, budget_mb, 20, "--worker-memory-mb");
  std::vector<std::vector<int>> out;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    const double used = memory_of(profiles, mask);
    if (used > budget_mb) continue;
    bool maximal = true;
    for (int i = 0; i < n && maximal; ++i)
      if (!(mask & (1u << i)) && used + profiles.models[static_cast<std::size_t>(i)].memory_mb <= budget_mb)
        maximal = false;
    if (!maximal) continue;
    out.push_back(indices_of(mask, n));
  }
  // Subsets holding faster models first: they tend to need the fewest
  // workers, which lets the planner rule out the others with one solve each.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

std::vector<std::vector<int>> subsets_with_fastest_within(const ReducedProfiles& profiles, double budget_mb) {
  const int n = static_cast<int>(profiles.models.size());
  if (budget_mb > 0) {
    check_memory_inputs(profiles, budget_mb, kMaxVariantModels, "lull plan variants");
    if (profiles.models.front().memory_mb > budget_mb)
      throw std::invalid_argument("--worker-memory-mb " + number_text(budget_mb) +
                                  " is below the fastest model's memory (" + profiles.models.front().name + ": " +
                                  number_text(profiles.models.front().memory_mb) + " MiB), which every variant keeps");
  } else if (n > kMaxVariantModels) {
    throw std::invalid_argument("lull plan variants: at most " + std::to_string(kMaxVariantModels) +
                                " models can be planned over (got " + std::to_string(n) + "; use --models)");
  }
  std::vector<std::vector<int>> out;
  for (unsigned mask = 1; mask < (1u << n); mask += 2)  // odd masks: model 0 in
    if (budget_mb <= 0 || memory_of(profiles, mask) <= budget_mb) out.push_back(indices_of(mask, n));
  return out;
}

ReducedProfiles restrict_models(const ReducedProfiles& profiles, const std::vector<int>& models) {
  ReducedProfiles out = profiles;
  out.models.clear();
  for (int i : models) out.models.push_back(profiles.models[static_cast<std::size_t>(i)]);
  return out;
}

}  // namespace lull::compiler
