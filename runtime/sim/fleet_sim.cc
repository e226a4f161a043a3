#include "runtime/sim/fleet_sim.h"

#include <algorithm>
#include <stdexcept>

#include <map>
#include <utility>

#include "runtime/core/fleet_split.h"
#include "runtime/manager/fleet_capacity.h"
#include "schema/expectation_mix.h"
#include "runtime/sim/latency_model.h"

namespace lull::sim {

SplitArrivals::SplitArrivals(std::unique_ptr<ArrivalSource> stream, WeightsAt weights_at, std::size_t group,
                             std::uint64_t split_seed)
    : stream_(std::move(stream)), weights_at_(std::move(weights_at)), group_(group), rng_(split_seed) {}

bool SplitArrivals::next(std::int64_t* t_us) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  while (stream_->next(t_us)) {
    const double u = uniform(rng_);  // drawn for every arrival, so every group draws the same sequence
    const std::vector<double>& w = weights_at_(*t_us);
    std::size_t pick = w.size() - 1;  // rounding: the last group takes u beyond the sum
    double cumulative = 0;
    for (std::size_t g = 0; g < w.size(); ++g) {
      cumulative += w[g];
      if (u < cumulative) {
        pick = g;
        break;
      }
    }
    if (pick == group_) return true;
  }
  return false;
}

namespace {

using lull::ExpectationMix;

const core::PolicyTable& set_for_workers(const core::FleetKindTables& kind) {
  for (const auto& t : kind.library)
    if (t.workers == kind.workers) return t;
  throw std::logic_error("fleet kind '" + kind.kind + "' has no set for its worker count");  // the loader checks
}

std::uint64_t mixed_seed(std::uint64_t seed, std::uint64_t salt) {
  return seed ^ (0x9e3779b97f4a7c15ULL * (salt + 1));  // distinct streams per class, reproducible
}

// The split in force over time: by the class's rate segment and, with
// autoscaling, the workers up per kind (re-searched for them as lull serve
// does, runtime/core/fleet_split.h). Piecewise constant from each start.
struct ClassSplits {
  std::vector<RateSegment> segments;  // the class's rates
  std::vector<double> starts_s;
  std::vector<std::vector<double>> weights;
  const std::vector<double>& at(std::int64_t t_us) const {
    const double t_s = static_cast<double>(t_us) * 1e-6;
    const auto it = std::upper_bound(starts_s.begin(), starts_s.end(), t_s);
    const auto i = it == starts_s.begin() ? 0 : static_cast<std::size_t>(it - starts_s.begin()) - 1;
    return weights[i];
  }
};

// A group's workers up over time: (from t_s, up), ascending, the first at 0.
using CountSteps = std::vector<std::pair<double, int>>;

int up_at(const CountSteps& steps, double t_s) {
  int up = steps.front().second;
  for (const auto& [t, n] : steps)
    if (t <= t_s) up = n;
  return up;
}

CountSteps count_steps(const SimResult& r, int file_count) {
  CountSteps steps{{0.0, file_count}};
  if (!r.autoscale) return steps;
  for (const auto& w : r.autoscale->workers_over_time) {
    if (w.up == steps.back().second) continue;
    if (w.t_s == steps.back().first)
      steps.back().second = w.up;  // at 0: the pool's count replaces the file's, not a second step at 0
    else
      steps.emplace_back(w.t_s, w.up);
  }
  return steps;
}

// The class's weights over the run for the counts up over time.
void fill_weights(const core::FleetClassTables& cls, const std::vector<CountSteps>& counts, ClassSplits& splits,
                  std::map<std::vector<int>, std::vector<core::FleetSplitPoint>>& resplit) {
  std::vector<double> starts;
  for (const auto& seg : splits.segments) starts.push_back(seg.start_s);
  for (const auto& c : counts)
    for (const auto& step : c) starts.push_back(step.first);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  splits.starts_s.clear();
  splits.weights.clear();
  for (double t : starts) {
    std::size_t i = 0;
    while (i + 1 < splits.segments.size() && splits.segments[i + 1].start_s <= t) ++i;
    std::vector<int> up;
    for (const auto& c : counts) up.push_back(up_at(c, t));
    auto found = resplit.find(up);
    if (found == resplit.end()) found = resplit.emplace(up, core::resplit_for_counts(cls, up).splits).first;
    splits.starts_s.push_back(t);
    splits.weights.push_back(core::split_at(found->second, splits.segments[i].qps).weights);
  }
}

FleetGroupResult simulate_group(const FleetSimSpec& spec, const core::FleetClassTables& cls, std::size_t c,
                                std::size_t k, const ClassSplits& splits, std::uint64_t stream_seed,
                                std::uint64_t split_seed, double run_s) {
  const auto& kind = cls.kinds[k];
  FleetGroupResult g;
  g.kind = kind.kind;
  g.workers = kind.workers;
  g.price_per_s = kind.price_per_s;
  g.worker_seconds = kind.workers * run_s;
  g.cost = g.worker_seconds * kind.price_per_s;
  g.table = &set_for_workers(kind);
  SplitArrivals arrivals(
      std::make_unique<RateArrivals>(splits.segments, spec.process, stream_seed),
      [&splits](std::int64_t t) -> const std::vector<double>& { return splits.at(t); }, k, split_seed);
  CompiledLatency latency(*g.table);
  SimOptions options;
  options.seed = spec.seed;
  options.dispatch_end_s = spec.dispatch_end_s;
  options.library = kind.library;
  options.workers_up = kind.workers;
  options.autoscale = spec.autoscale;
  options.autoscale.target = manager::group_target(spec.autoscale.target, cls);
  options.autoscale.seed = mixed_seed(spec.autoscale.seed, 1000 * c + k);  // drawn delays per group
  g.result = simulate(*g.table, arrivals, latency, options);
  if (g.result.autoscale) {
    // The group's run ends at its last event (none at all for a group of
    // weight 0); its workers then are paid for to the fleet's end.
    const WorkerCountSample& last = g.result.autoscale->workers_over_time.back();
    g.worker_seconds = g.result.worker_seconds +
                       std::max(0.0, run_s - g.result.simulated_s) * (last.starting + last.up + last.draining);
    g.cost = g.worker_seconds * kind.price_per_s;
  }
  return g;
}

// Passes over a class whose counts move the split: each pass re-simulates
// with the counts the last one produced; the first time the two differ moves
// later each pass (a count follows arrivals by the autoscaler's interval and
// the provisioning delay), so few passes agree; at most this many.
constexpr int kMaxSplitPasses = 20;

}  // namespace

FleetSimResult simulate_fleet(const core::FleetTables& fleet, const FleetSimSpec& spec) {
  if (spec.segments.empty()) throw std::invalid_argument("the fleet's trace has no rate segments");
  FleetSimResult out;
  for (const auto& s : spec.segments) out.run_s = std::max(out.run_s, s.end_s);
  if (spec.dispatch_end_s > 0) out.run_s = std::max(out.run_s, spec.dispatch_end_s);
  ExpectationMix fleet_expected;
  for (std::size_t c = 0; c < fleet.classes.size(); ++c) {
    const auto& cls = fleet.classes[c];
    FleetClassResult cr;
    cr.name = cls.name;
    cr.slo_ms = static_cast<double>(cls.slo_us) / 1000;
    cr.share = cls.share;
    ClassSplits splits;
    ExpectationMix expected;
    for (const auto& s : spec.segments) {
      RateSegment seg = s;
      seg.qps *= cls.share;
      const auto& split = cls.split_at(seg.qps);
      splits.segments.push_back(seg);
      expected.add(seg.qps * (seg.end_s - seg.start_s), split.accuracy, split.violation_rate);
    }
    cr.mean_load_qps = out.run_s > 0 ? expected.queries / out.run_s : 0;
    const std::uint64_t stream_seed = mixed_seed(spec.seed, 2 * c), split_seed = mixed_seed(spec.seed, 2 * c + 1);
    std::vector<CountSteps> counts;
    for (const auto& kind : cls.kinds) counts.push_back({{0.0, kind.workers}});
    std::map<std::vector<int>, std::vector<core::FleetSplitPoint>> resplit;
    for (int pass = 1;; ++pass) {
      fill_weights(cls, counts, splits, resplit);
      cr.groups.clear();
      for (std::size_t k = 0; k < cls.kinds.size(); ++k)
        cr.groups.push_back(simulate_group(spec, cls, c, k, splits, stream_seed, split_seed, out.run_s));
      cr.split_passes = pass;
      if (!spec.autoscale.enabled || cls.kinds.size() < 2) break;
      std::vector<CountSteps> produced;
      for (std::size_t k = 0; k < cls.kinds.size(); ++k)
        produced.push_back(count_steps(cr.groups[k].result, cls.kinds[k].workers));
      if (produced == counts) break;
      counts = std::move(produced);
      if (pass == kMaxSplitPasses) {
        cr.split_converged = false;
        break;
      }
    }
    // Each group's weight, averaged over the class's expected arrivals.
    for (std::size_t i = 0; i < splits.starts_s.size(); ++i) {
      const double from = splits.starts_s[i], to = i + 1 < splits.starts_s.size() ? splits.starts_s[i + 1] : out.run_s;
      for (const auto& seg : splits.segments) {
        const double n = seg.qps * std::max(0.0, std::min(to, seg.end_s) - std::max(from, seg.start_s));
        for (std::size_t k = 0; k < cr.groups.size(); ++k)
          cr.groups[k].weight += expected.queries > 0 ? n * splits.weights[i][k] / expected.queries : 0;
      }
    }
    for (const auto& g : cr.groups) {
      add(cr.mix, g.result);
      cr.mix.worker_seconds += g.worker_seconds;
      cr.mix.cost += g.cost;
    }
    finish(cr.mix);
    cr.mix.expected_accuracy = expected.accuracy();
    cr.mix.expected_violation_rate = expected.violation_rate();
    fleet_expected.add(expected.queries, expected.accuracy(), expected.violation_rate());
    for (const auto& g : cr.groups) add(out.fleet, g.result);
    out.fleet.worker_seconds += cr.mix.worker_seconds;
    out.fleet.cost += cr.mix.cost;
    out.classes.push_back(std::move(cr));
  }
  finish(out.fleet);
  out.fleet.expected_accuracy = fleet_expected.accuracy();
  out.fleet.expected_violation_rate = fleet_expected.violation_rate();
  return out;
}

}  // namespace lull::sim
