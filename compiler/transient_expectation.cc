#include "compiler/transient_expectation.h"

#include <malloc.h>

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

constexpr double kNegligible = 1e-12;

// Heap bytes in use (glibc): what building a rate's chain or a policy's step took, measured rather than
// estimated (the tables' own size functions leave out the problem, layouts and allocator slack).
std::size_t heap_in_use() {
#ifdef __GLIBC__
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#else
  return 0;
#endif
}

// A fixed policy at one rate: its action per state and its step.
struct PolicyAtRate {
  int step_id = 0;
  std::vector<int> choice;
};

// One rate's MDP, its transition tables and the policies stepped there.
struct RateChain {
  MdpProblem problem;
  std::unique_ptr<PolicySteps> steps;
  std::map<int, PolicyAtRate> by_grid;  // grid index -> policy
  std::vector<double> late_of_action;   // late_in_batch_in_cell per action, -1 until asked
  int idle_state = 0;                   // (1, J): where a decision that finds no arrival lands
  long last_used = 0;                   // the decision that last stepped here
  std::size_t bytes = 0;                // held, counted when a policy is added
};

}  // namespace

LoadExpectation transient_expectation(const ReducedProfiles& profiles, const CompileSpec& spec,
                                      const LibrarySweep& sweep, const std::vector<std::int64_t>& t, double step_qps,
                                      double count_dispersion, bool late, TransientStats* stats,
                                      std::size_t budget_bytes) {
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
  int rates_built = 0, built = 0, evicted = 0;
  std::size_t held = 0;  // bytes of the chains kept
  long decisions = 0;
  // Past the budget the chains stepped least recently go, built again if the walk comes back to their rate.
  auto evict_past_budget = [&](const RateChain* keep) {
    while (held > budget_bytes && chains.size() > 1) {
      auto oldest = chains.end();
      for (auto it = chains.begin(); it != chains.end(); ++it)
        if (it->second.get() != keep && (oldest == chains.end() || it->second->last_used < oldest->second->last_used))
          oldest = it;
      held -= oldest->second->bytes;
      chains.erase(oldest);
      ++evicted;
    }
  };
  auto policy_at = [&](int g, double rate) -> std::pair<RateChain*, PolicyAtRate*> {
    auto& chain = chains[rate];
    if (chain) {
      if (auto it = chain->by_grid.find(g); it != chain->by_grid.end()) {
        chain->last_used = decisions;
        return {chain.get(), &it->second};
      }
    }
    // Not stepped here yet: what it builds is measured against the budget.
    const std::size_t before = heap_in_use();
    if (!chain) {
      ++rates_built;
      MdpOptions o = spec.mdp;
      o.load_qps = rate;
      o.age_mid_cell = true;  // the runtime's earliest query is anywhere in its cell, not at its oldest
      chain = std::make_unique<RateChain>();
      chain->problem = build_mdp_problem(profiles, o);
      chain->steps = std::make_unique<PolicySteps>(chain->problem);
      chain->idle_state = chain->problem.state(1, chain->problem.J1() - 1);
      chain->late_of_action.assign(chain->problem.actions.size(), -1);
    }
    PolicyAtRate x;
    x.choice = choice_of(chain->problem, set.policies(order[static_cast<std::size_t>(g)]));
    x.step_id = chain->steps->add(x.choice);
    // At least the policy's choices: an allocator mallinfo2 cannot see (a sanitizer's) still bounds the walk.
    const std::size_t floor = sizeof(int) * x.choice.size();
    PolicyAtRate* policy = &chain->by_grid.emplace(g, std::move(x)).first->second;
    const std::size_t after = heap_in_use();
    const std::size_t took = std::max(after > before ? after - before : 0, floor);
    chain->bytes += took;
    held += took;
    ++built;
    chain->last_used = decisions;
    evict_past_budget(chain.get());
    return {chain.get(), policy};
  };

  const int workers = spec.mdp.workers;
  const double cv2 = std::max(spec.mdp.arrivals.burstiness(), 0.0);
  double now = static_cast<double>(t.front()), served = 0, missed = 0, accurate = 0;
  std::vector<double> p, next;
  std::size_t i = 0;
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
    const MdpProblem& problem = chain->problem;
    double busy = 0;
    for (std::size_t s = 0; s < p.size(); ++s) {
      const int a = policy->choice[s];
      // Mass below kNegligible changes no figure by 1e-8; skipping it spares the late count of states
      // reached only through it (that count is the walk's main cost).
      if (!(p[s] > kNegligible) || a < 0) continue;
      const Action& act = problem.actions[static_cast<std::size_t>(a)];
      const double b = problem.served(a);
      double& miss = chain->late_of_action[static_cast<std::size_t>(a)];
      if (miss < 0)
        miss =
            late ? late_in_batch_in_cell(problem, static_cast<int>(s), a, kLateCellPoints) : (act.meets_slo ? 0.0 : b);
      served += p[s] * b;
      missed += p[s] * miss;
      accurate += p[s] * (b - miss) * problem.accuracy[static_cast<std::size_t>(act.model)];
      busy += p[s] * problem.taus_us[static_cast<std::size_t>(act.tau)];
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
  if (stats) *stats = {decisions, rates_built, built, evicted, served};
  LoadExpectation m;
  for (const ServedPair& x : series) m.load_qps += x.share * x.estimate_qps;  // as lagged_mixture's: per arrival
  m.violation = served > 0 ? missed / served : 0;
  m.accuracy = served - missed > 0 ? accurate / (served - missed) : 0;
  return m;
}

}  // namespace lull::compiler
