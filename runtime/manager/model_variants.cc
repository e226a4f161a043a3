// Model variants: choosing a set by load, restating a subset's policies (see
// model_variants.h).
#include "runtime/manager/model_variants.h"

#include <stdexcept>

namespace lull::manager {

std::vector<std::string> model_names(const core::PolicyTable& table) {
  std::vector<std::string> names;
  for (const auto& m : table.models) names.push_back(m.name);
  return names;
}

core::PolicyTable widen_policy_table(const core::PolicyTable& subset, const core::PolicyTable& full,
                                     const std::string& what) {
  if (subset.task != full.task || subset.slo_us != full.slo_us || subset.workers != full.workers)
    throw std::invalid_argument(what + ": task, SLO or worker count differ from the full set's ('" + subset.task +
                                "', " + std::to_string(subset.slo_us) + " us, " + std::to_string(subset.workers) +
                                " workers vs '" + full.task + "', " + std::to_string(full.slo_us) + " us, " +
                                std::to_string(full.workers) + ")");
  std::vector<std::uint16_t> to_full;
  for (const auto& m : subset.models) {
    std::size_t i = 0;
    while (i < full.models.size() && full.models[i].name != m.name) ++i;
    if (i == full.models.size())
      throw std::invalid_argument(what + ": model '" + m.name + "' is not in the full set's models");
    to_full.push_back(static_cast<std::uint16_t>(i));
  }
  if (full.models.empty() || to_full.empty() || to_full.front() != 0)
    throw std::invalid_argument(what + ": models must start with the full set's model 0 ('" +
                                (full.models.empty() ? std::string() : full.models.front().name) +
                                "', the fallback and retry model, which stays loaded)");
  core::PolicyTable out = full;
  out.policies = subset.policies;
  for (auto& p : out.policies)
    for (auto& a : p.actions)
      if (a.batch != 0) a.model = to_full.at(a.model);
  return out;
}

std::vector<core::PolicyTable> widen_policy_library(const std::vector<core::PolicyTable>& subset,
                                                    const std::vector<core::PolicyTable>& full,
                                                    const std::string& what) {
  const auto counts = [](const std::vector<core::PolicyTable>& lib) {
    std::string out;
    for (const auto& t : lib) out += (out.empty() ? "" : ",") + std::to_string(t.workers);
    return out;
  };
  if (counts(subset) != counts(full))
    throw std::invalid_argument(what + ": worker counts " + counts(subset) + " differ from the full set's (" +
                                counts(full) + "); every variant needs a set for each worker count");
  std::vector<core::PolicyTable> out;
  for (std::size_t i = 0; i < subset.size(); ++i) out.push_back(widen_policy_table(subset[i], full[i], what));
  return out;
}

int choose_variant(const std::vector<double>& from_qps, int current, double load_qps, double hysteresis) {
  int raw = 0;
  for (std::size_t i = 0; i < from_qps.size(); ++i)
    if (load_qps >= from_qps[i]) raw = static_cast<int>(i);
  if (raw >= current) return raw;
  // Lower: leave the current variant only once clearly below its boundary.
  return load_qps < from_qps.at(static_cast<std::size_t>(current)) * (1 - hysteresis) ? raw : current;
}

}  // namespace lull::manager
