#include "compiler/solver/factored/pipeline_layout.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "schema/number_text.h"

namespace lull::compiler::factored {

Dims dims_of(const MdpProblem& p) {
  Dims d;
  static_cast<StateIndex&>(d) = p.states();
  d.K = p.K();
  d.B = p.J1() - 1;
  d.taus = static_cast<int>(p.taus_us.size());
  d.slo_us = p.options.slo_us;
  d.lambda_per_us = p.lambda_per_us;
  d.dispersion = p.arrivals.dispersion;
  d.residual_len = static_cast<int>(p.arrivals.burst_residual.size());
  d.age_mid_cell = p.options.age_mid_cell;
  // Siblings z >= K reach the idle worker again; phases past the overflow
  // (N+1)K all lead to F (idle_phase_row lumps them there).
  if (p.arrivals.same_instant_bursts)
    d.E = std::max(0, std::min(static_cast<int>(p.arrivals.idle_residual.size()), (d.N + 1) * d.K + 1) - d.K);
  // Pass-table scratch rows hold counts up to the overflow (N+1)K and the
  // count support of the widest interval: a bucket (at most the SLO) or a
  // clipped first bucket (at most its service time).
  double widest_us = d.slo_us;
  for (double tau : p.taus_us) widest_us = std::max(widest_us, tau);
  d.span = std::max((d.N + 1) * d.K + 1, d.support_end(d.lambda_per_us * widest_us)) + 1;
  return d;
}

std::vector<double> idle_phase_row(const MdpProblem& p, const Dims& d) {
  const std::vector<double>& w = p.arrivals.idle_residual;
  if (w.empty()) return {};
  const int len = d.K + d.E;
  std::vector<double> row(len, 0.0);
  for (int z = 0; z < len && z < static_cast<int>(w.size()); ++z) row[z] = w[z];
  if (len - 1 == (d.N + 1) * d.K)  // every phase from here on overflows to F
    for (std::size_t r = len; r < w.size(); ++r) row[len - 1] += w[r];
  double sum = 0;
  for (double v : row) sum += v;
  for (double& v : row) v /= sum;
  return row;
}

ActionLayout layout_actions(const MdpProblem& p) {
  ActionLayout L;
  const std::size_t A = p.actions.size();
  L.begin = p.action_begin;
  L.state.resize(A);
  L.count_begin.assign(A + 1, 0);
  L.tau_whole.assign(p.taus_us.size(), 0);
  L.tau_slot.assign(p.taus_us.size(), -1);
  std::size_t total = 0;
  for (int s = 0; s < p.num_states(); ++s)
    for (int a = p.action_begin[s]; a < p.action_begin[s + 1]; ++a) {
      const Action& act = p.actions[a];
      L.state[a] = s;
      L.count_begin[a] = total;
      if (act.partial()) {
        total += static_cast<std::size_t>(p.N() + 2 - (p.n_of(s) - act.batch));
        if (L.tau_slot[act.tau] < 0) L.tau_slot[act.tau] = 0;  // numbered below, in tau order
      } else {
        L.tau_whole[act.tau] = 1;
      }
    }
  L.count_begin[A] = total;
  for (const Action& act : p.actions) {
    L.batch.push_back(act.batch);
    L.tau.push_back(act.tau);
    L.next_j.push_back(act.next_j);
    L.model.push_back(act.model);
    L.reward.push_back(act.reward);
    L.meets.push_back(act.meets_slo ? 1 : 0);
  }
  for (int k = 0; k < static_cast<int>(p.taus_us.size()); ++k) {
    if (L.tau_slot[k] < 0) continue;
    L.tau_slot[k] = static_cast<int>(L.slot_tau.size());
    L.slot_tau.push_back(k);
    L.count_stride =
        std::max(L.count_stride, count_support_end(p.lambda_per_us * p.taus_us[k], p.arrivals.dispersion) + p.K());
  }
  return L;
}

namespace {

// Compressed rows from (row, value) pairs, keeping the pairs' order within a row.
template <class T>
void compress(int rows, const std::vector<int>& row_of, const std::vector<T>& values, std::vector<int>& begin,
              std::vector<T>& out) {
  begin.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (int r : row_of) ++begin[r + 1];
  for (int r = 0; r < rows; ++r) begin[r + 1] += begin[r];
  out.resize(values.size());
  std::vector<int> fill(begin.begin(), begin.end() - 1);
  for (std::size_t e = 0; e < values.size(); ++e) out[fill[row_of[e]]++] = values[e];
}

}  // namespace

PolicyLayout layout_policy(const MdpProblem& p, const ActionLayout& L, const std::vector<int>& tau_bucket,
                           const std::vector<int>& choice) {
  PolicyLayout out;
  const int S = p.num_states(), taus = static_cast<int>(p.taus_us.size()), N = p.N();
  std::vector<int> tau_of, whole_states, target_of, src;
  std::vector<long long> prob;
  for (int s = 0; s < S; ++s) {  // ascending s: a fixed summation order
    const int a = choice[s];
    if (a < 0) {
      target_of.push_back(p.state(1, p.J1() - 1));
      src.push_back(s);
      prob.push_back(-1);
      continue;
    }
    if (L.next_j[a] < 0) {
      tau_of.push_back(L.tau[a]);
      whole_states.push_back(s);
      continue;
    }
    const int left = p.n_of(s) - L.batch[a];
    const int len = static_cast<int>(L.count_begin[a + 1] - L.count_begin[a]);
    for (int k = 0; k < len; ++k) {
      target_of.push_back(left + k > N ? p.full_state() : p.state(left + k, L.next_j[a]));
      src.push_back(s);
      prob.push_back(static_cast<long long>(L.count_begin[a]) + k);
    }
  }
  compress(taus, tau_of, whole_states, out.states_begin, out.states);
  compress(S, target_of, src, out.in_begin, out.in_src);
  std::vector<int> unused;
  compress(S, target_of, prob, unused, out.in_prob);
  // Only the taus the policy uses: the others carry no mass.
  std::vector<int> used_taus, used_bucket;
  for (int k = 0; k < taus; ++k)
    if (out.states_begin[k + 1] > out.states_begin[k]) {
      used_taus.push_back(k);
      used_bucket.push_back(tau_bucket[k]);
    }
  compress(p.J1(), used_bucket, used_taus, out.group_begin, out.group_taus);
  return out;
}

std::size_t factored_table_bytes(const MdpProblem& p, const ActionLayout& L) {
  const std::size_t K = p.K(), cols = p.N() + 1, taus = p.taus_us.size(), B = p.J1() - 1;
  const Dims d = dims_of(p);
  const std::size_t extra = d.E > 0 ? d.K + d.E + taus * (cols + 1) : 0;  // idle row, idle_rows, U_idle
  const std::size_t doubles =
      p.num_states() * K + (B + taus) * K * cols + (B + taus) * K + L.count_begin.back() + extra;
  return sizeof(double) * doubles + sizeof(std::size_t) * L.count_begin.size() + sizeof(int) * taus;
}

double estimated_table_bytes(const Dims& d, const ActionLayout& L) {
  const double tables = d.B + d.taus, K = d.K, slots = static_cast<double>(L.slot_tau.size());
  const double doubles = 3 * tables * d.span                                                 // px, cdf, sf scratch rows
                         + tables * K * d.cols()                                             // pass
                         + tables * K                                                        // kernel
                         + static_cast<double>(d.num_states()) * K                           // phase
                         + (d.E > 0 ? d.K + d.E + d.taus * (d.cols() + 1.0 + d.span) : 0.0)  // idle phases past K
                         + static_cast<double>(L.count_begin.back())                         // count_prob
                         + slots * L.count_stride                                            // count pmfs
                         + slots * K * (d.N + 2.0);                                          // count tables
  return sizeof(double) * doubles;
}

void check_table_memory(const Dims& d, const ActionLayout& L, double limit_bytes) {
  if (!(limit_bytes > 0))
    limit_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const double need = estimated_table_bytes(d, L);
  if (need > limit_bytes)
    throw std::runtime_error("the solver's tables would need about " + number_text(need / 1e9) + " GB, more than the " +
                             number_text(limit_bytes / 1e9) + " GB of memory here (rows of " + std::to_string(d.span) +
                             " arrivals: a service time far beyond the SLO?)");
}

double work_per_step(const Dims& d, const ActionLayout& L) {
  return static_cast<double>(d.K) * (d.taus + d.J1) * d.cols() + static_cast<double>(d.K) * L.next_j.size() +
         static_cast<double>(L.count_begin.back());
}

}  // namespace lull::compiler::factored
