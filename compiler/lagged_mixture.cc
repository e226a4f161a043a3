#include "compiler/lagged_mixture.h"

#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <utility>

#include "compiler/parallel_for.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {

namespace {

// Per arrival, the arrivals per second in a window of `window_us` centred on
// it (cut at the trace's ends: the rate over what it holds).
std::vector<double> centred_rates(const std::vector<std::int64_t>& t, std::int64_t window_us) {
  std::vector<double> out(t.size());
  const std::int64_t half = window_us / 2;
  std::size_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    while (t[i] - t[lo] > half) ++lo;
    if (hi < i) hi = i;
    while (hi + 1 < t.size() && t[hi + 1] - t[i] <= half) ++hi;
    const double span = static_cast<double>(std::min(t[i] - t.front(), half) + std::min(t.back() - t[i], half));
    out[i] = static_cast<double>(hi - lo + 1) * 1e6 / (span > 0 ? span : static_cast<double>(window_us));
  }
  return out;
}

}  // namespace

std::vector<ServedPair> served_load_series(const std::vector<std::int64_t>& t, double step, double count_dispersion,
                                           std::int64_t window_us, std::int64_t rate_window_us,
                                           std::int64_t smooth_window_us) {
  if (t.empty() || !(step > 0)) throw std::invalid_argument("served_load_series: no arrivals or a bad rate step");
  // The centred window's count carries its own noise (variance D x count);
  // left in, a stationary trace would read as a moving rate and the
  // policies' convex violation would turn the noise into pessimism. So the
  // rate is shrunk toward a window kRateSmoothing times longer, by the share
  // of the short window's variance about it that the noise does not explain.
  const auto fast = centred_rates(t, rate_window_us),
             slow = centred_rates(t, smooth_window_us > 0 ? smooth_window_us : rate_window_us * kRateSmoothing);
  double spread = 0, noise = 0;
  const double window_s = static_cast<double>(rate_window_us) / 1e6;
  for (std::size_t i = 0; i < t.size(); ++i) {
    spread += (fast[i] - slow[i]) * (fast[i] - slow[i]);
    noise += std::max(1.0, count_dispersion) * slow[i] / window_s;
  }
  const double keep = spread > 0 ? std::clamp(1 - noise / spread, 0.0, 1.0) : 0.0;
  std::vector<ServedPair> out(t.size());
  std::size_t first = 0;
  const double per_s = 1e6 / static_cast<double>(window_us), n = static_cast<double>(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    while (t[i] - t[first] >= window_us) ++first;
    const double rate = slow[i] + keep * (fast[i] - slow[i]);
    out[i] = {static_cast<double>(i - first + 1) * per_s, static_cast<double>(std::lround(rate / step)) * step, 1 / n};
  }
  return out;
}

std::vector<ServedPair> served_load_pairs(const std::vector<std::int64_t>& t, double step, double count_dispersion,
                                          std::int64_t window_us, std::int64_t rate_window_us) {
  std::map<std::pair<double, double>, double> by_pair;  // (estimate, rate) -> arrivals
  for (const ServedPair& x : served_load_series(t, step, count_dispersion, window_us, rate_window_us))
    by_pair[{x.estimate_qps, x.rate_qps}] += 1;
  std::vector<ServedPair> out;
  const double n = static_cast<double>(t.size());
  for (const auto& [key, arrivals] : by_pair) out.push_back({key.first, key.second, arrivals / n});
  return out;
}

std::vector<int> choice_of(const MdpProblem& p, const schema::Policy& policy) {
  const int first = p.state(1, 0);
  if (policy.action_model_size() != p.num_states() - first || policy.action_batch_size() != policy.action_model_size())
    throw std::invalid_argument("choice_of: the policy was compiled for other states");
  std::vector<int> choice(static_cast<std::size_t>(p.num_states()), -1);
  for (int s = first; s < p.num_states(); ++s) {
    const auto m = static_cast<int>(policy.action_model(s - first)),
               b = static_cast<int>(policy.action_batch(s - first));
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1] && choice[s] < 0; ++a)
      if (p.actions[a].model == m && p.actions[a].batch == b) choice[s] = a;
    if (choice[s] < 0) throw std::invalid_argument("choice_of: the policy's action is not among the state's");
  }
  return choice;
}

namespace {

// P(the sum of `gaps` central arrival gaps < x): a gamma with the gaps' mean
// 1 / rate and squared CV `cv2` (1: Poisson, an Erlang).
double gaps_below(double gaps, double rate, double cv2, double x) {
  if (!(x > 0)) return 0;
  // In double: boost's default promotes to long double, 5x the time for digits a share does not need.
  using InDouble = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  return boost::math::gamma_p(gaps / cv2, x * rate / cv2, InDouble());
}

// The queries of a missing action late when its earliest query has `slack`: that one, and each later one whose
// extra slack (i x K central gaps) is under the batch's latency minus `slack`.
double late_at_slack(const MdpProblem& p, const Action& act, double slack) {
  const double room = p.taus_us[static_cast<std::size_t>(act.tau)] - slack;
  if (!(room > 0)) return 0;
  // The central process: K workers' round robin, its gaps' squared CV (the count's dispersion for batch:D).
  const double rate = p.options.load_qps / 1e6, cv2 = std::max(p.options.arrivals.burstiness(), 0.01);
  double miss = 1;
  for (int i = 1; i < act.batch; ++i) miss += gaps_below(i * p.options.workers, rate, cv2, room);
  return std::min(miss, static_cast<double>(act.batch));
}

}  // namespace

double late_in_batch(const MdpProblem& p, int s, int a) {
  const Action& act = p.actions[static_cast<std::size_t>(a)];
  // A missing action's latency is above T_j (F: T_0 = 0), so its earliest query is late.
  return act.meets_slo ? 0 : late_at_slack(p, act, p.grid_us[static_cast<std::size_t>(p.j_of(s))]);
}

double late_in_batch_in_cell(const MdpProblem& p, int s, int a, int points) {
  const Action& act = p.actions[static_cast<std::size_t>(a)];
  if (act.meets_slo) return 0;
  const auto j = static_cast<std::size_t>(p.j_of(s));
  const double low = p.grid_us[j];
  // The last point T_J = S is a new query's slack, exact; F (j = 0) holds a backlog, its slack unknown below T_1.
  const double width = j + 1 < p.grid_us.size() && s != p.full_state() ? p.grid_us[j + 1] - low : 0;
  const int m = width > 0 ? points : 1;
  double late = 0;
  for (int k = 0; k < m; ++k) late += late_at_slack(p, act, low + width * (k + 0.5) / m);
  return late / m;
}

Figures late_expectation(const MdpProblem& p, const std::vector<int>& choice, const std::vector<double>& stationary) {
  if (stationary.size() != static_cast<std::size_t>(p.num_states()) || choice.size() != stationary.size())
    throw std::invalid_argument("late_expectation: a distribution or choice of another problem");
  double served = 0, late = 0, satisfied = 0, accuracy = 0;
  for (int s = 0; s < p.num_states(); ++s) {
    const double w = stationary[static_cast<std::size_t>(s)];
    const int a = choice[static_cast<std::size_t>(s)];
    if (a < 0 || !(w > 0)) continue;
    const double b = p.served(a), miss = late_in_batch(p, s, a);
    served += w * b;
    late += w * miss;
    satisfied += w * (b - miss);
    accuracy += w * (b - miss) * p.accuracy[static_cast<std::size_t>(p.actions[static_cast<std::size_t>(a)].model)];
  }
  return {satisfied > 0 ? accuracy / satisfied : 0, served > 0 ? late / served : 0};
}

LoadExpectation lagged_mixture(const ReducedProfiles& profiles, const CompileSpec& spec, const LibrarySweep& sweep,
                               const std::vector<ServedPair>& pairs, double min_share, bool late) {
  const auto& reports = sweep.sweep.reports;
  const auto& set = sweep.sweep.set;
  if (reports.empty() || static_cast<int>(reports.size()) != set.policies_size())
    throw std::invalid_argument("lagged_mixture: a sweep without its policies");
  std::vector<int> order(reports.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return reports[a].load_qps < reports[b].load_qps; });
  // (grid index in `order`, rate) -> (accuracy, violation); the compiled load's own first.
  std::map<std::pair<int, double>, std::pair<double, double>> known;
  std::map<std::pair<int, double>, double> share_of;  // (grid index, rate) -> arrivals
  std::vector<int> served(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto it = std::lower_bound(order.begin(), order.end(), pairs[i].estimate_qps,
                                     [&](int r, double l) { return reports[r].load_qps < l; });
    const int g = it == order.end() ? static_cast<int>(order.size()) - 1 : static_cast<int>(it - order.begin());
    served[i] = g;
    const LoadReport& r = reports[order[g]];
    if (!late)
      known.emplace(std::make_pair(g, r.load_qps), std::make_pair(r.expected_accuracy, r.expected_violation_rate));
    share_of[{g, pairs[i].rate_qps}] += pairs[i].share;
  }
  std::map<double, std::vector<int>> todo;  // rate -> grid indices to evaluate there
  for (const auto& [key, share] : share_of)
    if (share >= min_share && key.second > 0 && !known.count(key)) todo[key.second].push_back(key.first);
  if (late)  // section 6's figures at the compiled loads count whole batches: each served policy at its own load too
    for (int g : std::set<int>(served.begin(), served.end())) {
      auto& at = todo[reports[order[g]].load_qps];
      if (std::find(at.begin(), at.end(), g) == at.end()) at.push_back(g);
    }
  const std::vector<std::pair<double, std::vector<int>>> rates(todo.begin(), todo.end());
  std::vector<std::vector<SolverOutput>> found(rates.size());
  SolveOptions loose = spec.solve;  // a mixture term: 1e-9 of a share is far below what the trace tells
  loose.stationary_tolerance = std::max(loose.stationary_tolerance, 1e-9);
  parallel_for_each(static_cast<int>(rates.size()), rates.size() > 1, [&](int i) {
    MdpOptions o = spec.mdp;
    o.load_qps = rates[i].first;
    const MdpProblem problem = build_mdp_problem(profiles, o);
    std::vector<std::vector<int>> choices;
    for (int g : rates[i].second) choices.push_back(choice_of(problem, set.policies(order[g])));
    found[i] = evaluate_policies(problem, choices, loose, late);
    if (late)
      for (std::size_t k = 0; k < choices.size(); ++k) {
        const Figures f = late_expectation(problem, choices[k], found[i][k].stationary);
        found[i][k].expected_accuracy = f.accuracy;
        found[i][k].expected_violation_rate = f.violation;
        found[i][k].stationary = {};
      }
  });
  for (std::size_t i = 0; i < rates.size(); ++i)
    for (std::size_t k = 0; k < rates[i].second.size(); ++k)
      known[{rates[i].second[k], rates[i].first}] = {found[i][k].expected_accuracy,
                                                     found[i][k].expected_violation_rate};
  LoadExpectation m;
  double weight = 0, satisfied = 0, accuracy = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const int g = served[i];
    auto it = known.find({g, pairs[i].rate_qps});
    if (it == known.end()) it = known.find({g, reports[order[g]].load_qps});
    const auto [acc, viol] = it->second;
    const double share = pairs[i].share;
    weight += share;
    m.load_qps += share * pairs[i].estimate_qps;
    m.violation += share * viol;
    satisfied += share * (1 - viol);
    accuracy += share * (1 - viol) * acc;
  }
  m.load_qps /= weight;
  m.violation /= weight;
  m.accuracy = satisfied > 0 ? accuracy / satisfied : 0;
  return m;
}

std::vector<ServedPair> estimate_noise_pairs(double load_qps, double dispersion, std::int64_t window_us,
                                             double min_share) {
  if (!(load_qps > 0) || window_us <= 0 || !(dispersion > 0))
    throw std::invalid_argument("estimate_noise_pairs: the load, window and dispersion must be positive");
  const double window_s = static_cast<double>(window_us) / 1e6, mean = load_qps * window_s;
  const double var = dispersion * mean, sd = std::sqrt(var);
  // log pmf of the count k beyond the arrival itself.
  auto log_pmf = [&](long k) {
    const double x = static_cast<double>(k);
    if (std::abs(dispersion - 1) < 1e-9) return x * std::log(mean) - mean - std::lgamma(x + 1);
    if (dispersion > 1) {  // negative binomial: r = mean / (D - 1), success probability 1 / D
      const double r = mean / (dispersion - 1);
      return std::lgamma(x + r) - std::lgamma(r) - std::lgamma(x + 1) + r * std::log(1 / dispersion) +
             x * std::log(1 - 1 / dispersion);
    }
    const double z = (x - mean) / sd;  // rounded normal, renormalised below
    return -0.5 * z * z;
  };
  const long lo = std::max(0L, static_cast<long>(std::floor(mean - 12 * sd - 5)));
  const long hi = static_cast<long>(std::ceil(mean + 12 * sd + 5));
  std::vector<double> p;
  double peak = -INFINITY;
  for (long k = lo; k <= hi; ++k) peak = std::max(peak, log_pmf(k));
  double total = 0;
  for (long k = lo; k <= hi; ++k) total += p.emplace_back(std::exp(log_pmf(k) - peak));
  std::vector<ServedPair> out;
  double kept = 0;
  for (long k = lo; k <= hi; ++k) {
    const double share = p[static_cast<std::size_t>(k - lo)] / total;
    if (share < min_share) continue;
    out.push_back({static_cast<double>(k + 1) / window_s, load_qps, share});
    kept += share;
  }
  for (auto& x : out) x.share /= kept;
  return out;
}

double served_dispersion(const CompileSpec& spec) { return std::max(spec.mdp.arrivals.burstiness(), 0.01); }

LoadExpectation served_expectation_at(const ReducedProfiles& profiles, const CompileSpec& spec,
                                      const LibrarySweep& sweep, double load_qps, std::int64_t window_us, bool late) {
  LoadExpectation m = lagged_mixture(profiles, spec, sweep,
                                     estimate_noise_pairs(load_qps, served_dispersion(spec), window_us), 1e-4, late);
  m.load_qps = load_qps;
  return m;
}

std::vector<LoadExpectation> served_expectations(const ReducedProfiles& profiles, const CompileSpec& spec,
                                                 const LibrarySweep& sweep, std::int64_t window_us, bool late) {
  const auto& reports = sweep.sweep.reports;
  std::vector<LoadExpectation> out(reports.size());
  // One MDP per load, built and evaluated inside lagged_mixture; the loads in parallel.
  parallel_for_each(static_cast<int>(reports.size()), reports.size() > 1, [&](int i) {
    out[static_cast<std::size_t>(i)] =
        served_expectation_at(profiles, spec, sweep, reports[static_cast<std::size_t>(i)].load_qps, window_us, late);
  });
  return out;
}

std::vector<double> served_load_grid(double load_qps, double dispersion, std::int64_t window_us) {
  if (!(load_qps > 0) || window_us <= 0 || !(dispersion > 0))
    throw std::invalid_argument("served_load_grid: the load, window and dispersion must be positive");
  const double window_s = static_cast<double>(window_us) / 1e6;
  // The estimate: (1 + count) / window, the count of mean load x window and variance D x that.
  const double mean = load_qps + 1 / window_s, sd = std::sqrt(dispersion * load_qps * window_s) / window_s;
  const double step = std::max(1.0, std::round(load_qps * 0.01));
  const long lo = std::min(0L, static_cast<long>(std::floor((mean - 5 * sd - load_qps) / step)));
  const long hi = static_cast<long>(std::ceil((mean + 5 * sd - load_qps) / step));
  std::vector<double> out;
  for (long i = lo; i <= hi; ++i)
    if (const double l = load_qps + static_cast<double>(i) * step; l > 0) out.push_back(l);
  return out;
}

}  // namespace lull::compiler
