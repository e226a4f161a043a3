#include "compiler/transient_expectation.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "compiler/lagged_mixture.h"
#include "compiler/mdp/mdp_problem.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {
namespace {

// Per state, what one decision of a fixed policy at one rate serves and takes.
struct PolicyAtRate {
  int step_id = 0;
  std::vector<double> served, late, accurate, busy_us;  // accurate: satisfied x accuracy
};

// One rate's MDP, its transition tables and the policies stepped there.
struct RateChain {
  MdpProblem problem;
  std::unique_ptr<PolicySteps> steps;
  std::map<int, PolicyAtRate> by_grid;  // grid index -> policy
  std::vector<double> late_of_action;   // late_in_batch_in_cell per action, -1 until asked
  int idle_state = 0;                   // (1, J): where a decision that finds no arrival lands
};

}  // namespace

LoadExpectation transient_expectation(const ReducedProfiles& profiles, const CompileSpec& spec,
                                      const LibrarySweep& sweep, const std::vector<std::int64_t>& t, double step_qps,
                                      double count_dispersion, bool late, TransientStats* stats) {
  const auto& reports = sweep.sweep.reports;
  const auto& set = sweep.sweep.set;
  if (t.size() < 2) throw std::invalid_argument("transient_expectation: fewer than two arrivals");
  if (reports.empty() || static_cast<int>(reports.size()) != set.policies_size())
    throw std::invalid_argument("transient_expectation: a sweep without its policies");
  std::vector<int> order(reports.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return reports[a].load_qps < reports[b].load_qps; });
  const auto series = served_load_series(t, step_qps, count_dispersion, kLoadWindowUs, kTransientRateWindowUs,
                                         kRateWindowUs * kRateSmoothing);
  auto grid_of = [&](double estimate) {
    const auto it = std::lower_bound(order.begin(), order.end(), estimate,
                                     [&](int r, double l) { return reports[r].load_qps < l; });
    return it == order.end() ? static_cast<int>(order.size()) - 1 : static_cast<int>(it - order.begin());
  };

  std::map<double, std::unique_ptr<RateChain>> chains;
  auto policy_at = [&](int g, double rate) -> std::pair<RateChain*, PolicyAtRate*> {
    auto& chain = chains[rate];
    if (!chain) {
      MdpOptions o = spec.mdp;
      o.load_qps = rate;
      chain = std::make_unique<RateChain>();
      chain->problem = build_mdp_problem(profiles, o);
      chain->steps = std::make_unique<PolicySteps>(chain->problem);
      chain->idle_state = chain->problem.state(1, chain->problem.J1() - 1);
      chain->late_of_action.assign(chain->problem.actions.size(), -1);
    }
    auto it = chain->by_grid.find(g);
    if (it == chain->by_grid.end()) {
      const MdpProblem& p = chain->problem;
      const auto choice = choice_of(p, set.policies(order[static_cast<std::size_t>(g)]));
      PolicyAtRate x;
      x.step_id = chain->steps->add(choice);
      const auto n = static_cast<std::size_t>(p.num_states());
      x.served.assign(n, 0);
      x.late.assign(n, 0);
      x.accurate.assign(n, 0);
      x.busy_us.assign(n, 0);
      for (int s = 0; s < p.num_states(); ++s) {
        const int a = choice[static_cast<std::size_t>(s)];
        if (a < 0) continue;
        const Action& act = p.actions[static_cast<std::size_t>(a)];
        const double b = p.served(a);
        double& known = chain->late_of_action[static_cast<std::size_t>(a)];
        if (known < 0) known = late ? late_in_batch_in_cell(p, s, a, kLateCellPoints) : (act.meets_slo ? 0.0 : b);
        const double miss = known;
        const auto i = static_cast<std::size_t>(s);
        x.served[i] = b;
        x.late[i] = miss;
        x.accurate[i] = (b - miss) * p.accuracy[static_cast<std::size_t>(act.model)];
        x.busy_us[i] = p.taus_us[static_cast<std::size_t>(act.tau)];
      }
      it = chain->by_grid.emplace(g, std::move(x)).first;
    }
    return {chain.get(), &it->second};
  };

  const int workers = spec.mdp.workers;
  const double cv2 = std::max(spec.mdp.arrivals.burstiness(), 0.0);
  double now = static_cast<double>(t.front()), served = 0, missed = 0, accurate = 0;
  std::vector<double> p, next;
  std::size_t i = 0;
  long decisions = 0;
  int policies = 0;
  double last_busy = 0;
  while (now < static_cast<double>(t.back())) {
    while (i + 1 < t.size() && static_cast<double>(t[i + 1]) <= now) ++i;
    // The rate the service will meet: at its middle, the last decision's mean service time ahead.
    std::size_t k = i;
    while (k + 1 < t.size() && static_cast<double>(t[k + 1]) <= now + last_busy / 2) ++k;
    const auto [chain, policy] = policy_at(grid_of(series[i].estimate_qps), std::max(series[k].rate_qps, step_qps));
    if (p.empty()) {
      p.assign(static_cast<std::size_t>(chain->problem.num_states()), 0);
      p[static_cast<std::size_t>(chain->problem.state(0, 0))] = 1;  // the simulator starts with empty queues
    }
    double busy = 0;
    for (std::size_t s = 0; s < p.size(); ++s) {
      if (!(p[s] > 0)) continue;
      served += p[s] * policy->served[s];
      missed += p[s] * policy->late[s];
      accurate += p[s] * policy->accurate[s];
      busy += p[s] * policy->busy_us[s];
    }
    last_busy = busy;
    chain->steps->step(policy->step_id, p, next);
    const double rate_per_us = chain->problem.options.load_qps / 1e6;
    // At least a microsecond a decision: the walk always reaches the trace's end.
    now +=
        std::max(1.0, busy + next[static_cast<std::size_t>(chain->idle_state)] * (workers + cv2) / (2 * rate_per_us));
    std::swap(p, next);
    ++decisions;
  }
  for (const auto& [rate, chain] : chains) policies += static_cast<int>(chain->by_grid.size());
  if (stats) *stats = {decisions, static_cast<int>(chains.size()), policies, served};
  LoadExpectation m;
  for (const ServedPair& x : series) m.load_qps += x.share * x.estimate_qps;  // as lagged_mixture's: per arrival
  m.violation = served > 0 ? missed / served : 0;
  m.accuracy = served - missed > 0 ? accurate / (served - missed) : 0;
  return m;
}

}  // namespace lull::compiler
