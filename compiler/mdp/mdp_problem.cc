#include "compiler/mdp/mdp_problem.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "compiler/mdp/slack_grid.h"

namespace lull::compiler {

MdpProblem build_mdp_problem(const ReducedProfiles& profiles, const MdpOptions& options) {
  if (options.workers < 1) throw std::invalid_argument("workers must be >= 1");
  if (!(options.load_qps > 0)) throw std::invalid_argument("load must be > 0 QPS");
  if (options.max_queue < 1) throw std::invalid_argument("max queue must be >= 1");
  if (options.intervals < 1) throw std::invalid_argument("intervals must be >= 1");
  if (options.phase_cap < 0) throw std::invalid_argument("phase cap must be >= 0");
  if (profiles.models.empty()) throw std::invalid_argument("no models");
  MdpProblem p;
  p.options = options;
  p.arrivals = arrival_model(options.arrivals, options.workers, options.load_qps, options.phase_cap);
  p.lambda_per_us = p.arrivals.rate_per_us;
  const auto& models = profiles.models;
  p.grid_us = options.discretization == Discretization::kFld ? fld_grid_us(options.slo_us, options.intervals)
                                                             : md_grid_us(options.slo_us, models, options.max_queue);
  for (const auto& m : models) p.accuracy.push_back(m.accuracy);

  std::map<double, int> tau_ids;
  auto add = [&](int model, int batch, int n, int j) {
    Action a;
    a.model = model;
    a.batch = batch;
    const double lat = models[model].lat_us(batch);
    a.meets_slo = n <= p.N() && lat <= p.grid_us[j];
    a.reward = a.meets_slo ? models[model].accuracy : 0.0;
    if (batch < n) a.next_j = slack_index(p.grid_us, p.grid_us[j] - lat);
    tau_ids.emplace(lat, 0);
    p.actions.push_back(a);
  };

  p.action_begin.assign(static_cast<std::size_t>(p.num_states()) + 1, 0);
  for (int s = 0; s < p.num_states(); ++s) {
    p.action_begin[s] = static_cast<int>(p.actions.size());
    const int n = p.n_of(s), j = p.j_of(s);
    if (s == p.full_state()) {
      add(0, p.N() + 1, n, j);
      continue;
    }
    if (n == 0) continue;  // never reached; moves to (1, J)
    const double slack = p.grid_us[j];
    const bool variable = options.batching == Batching::kVariable;
    bool fallback_listed = false;
    for (int m = 0; m < static_cast<int>(models.size()); ++m) {
      for (int b = variable ? 1 : n; b <= n; ++b) {
        if (models[m].lat_us(b) > slack) continue;
        add(m, b, n, j);
        fallback_listed |= (m == 0 && b == n);
      }
    }
    if (!fallback_listed) add(0, n, n, j);
  }
  p.action_begin[p.num_states()] = static_cast<int>(p.actions.size());

  for (const auto& [lat, id] : tau_ids) p.taus_us.push_back(lat);
  int next = 0;
  for (auto& [lat, id] : tau_ids) id = next++;
  for (auto& a : p.actions) a.tau = tau_ids.at(models[a.model].lat_us(a.batch));
  return p;
}

}  // namespace lull::compiler
