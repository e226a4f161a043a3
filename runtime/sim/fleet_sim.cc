#include "runtime/sim/fleet_sim.h"

#include <algorithm>
#include <stdexcept>

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

const runtime::PolicyTable& set_for_workers(const runtime::FleetKindTables& kind) {
  for (const auto& t : kind.library)
    if (t.workers == kind.workers) return t;
  throw std::logic_error("fleet kind '" + kind.kind + "' has no set for its worker count");  // the loader checks
}

// The split in force over each of the class's rate segments.
struct ClassSplits {
  std::vector<RateSegment> segments;  // the class's rates
  std::vector<std::vector<double>> weights;
  const std::vector<double>& at(std::int64_t t_us) const {
    const double t_s = static_cast<double>(t_us) * 1e-6;
    const auto it = std::upper_bound(segments.begin(), segments.end(), t_s,
                                     [](double t, const RateSegment& s) { return t < s.start_s; });
    const auto i = it == segments.begin() ? 0 : static_cast<std::size_t>(it - segments.begin()) - 1;
    return weights[i];
  }
};

std::uint64_t mixed_seed(std::uint64_t seed, std::uint64_t salt) {
  return seed ^ (0x9e3779b97f4a7c15ULL * (salt + 1));  // distinct streams per class, reproducible
}

}  // namespace

FleetSimResult simulate_fleet(const runtime::FleetTables& fleet, const FleetSimSpec& spec) {
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
    std::vector<double> weight_sum(cls.kinds.size(), 0);
    for (const auto& s : spec.segments) {
      RateSegment seg = s;
      seg.qps *= cls.share;
      const auto& split = cls.split_at(seg.qps);
      splits.segments.push_back(seg);
      splits.weights.push_back(split.weights);
      const double n = seg.qps * (seg.end_s - seg.start_s);
      expected.add(n, split.accuracy, split.violation_rate);
      for (std::size_t k = 0; k < weight_sum.size(); ++k) weight_sum[k] += n * split.weights[k];
    }
    cr.mean_load_qps = out.run_s > 0 ? expected.queries / out.run_s : 0;
    const std::uint64_t stream_seed = mixed_seed(spec.seed, 2 * c), split_seed = mixed_seed(spec.seed, 2 * c + 1);
    for (std::size_t k = 0; k < cls.kinds.size(); ++k) {
      const auto& kind = cls.kinds[k];
      FleetGroupResult g;
      g.kind = kind.kind;
      g.workers = kind.workers;
      g.price_per_s = kind.price_per_s;
      g.weight = expected.queries > 0 ? weight_sum[k] / expected.queries : 0;
      g.worker_seconds = kind.workers * out.run_s;
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
                           std::max(0.0, out.run_s - g.result.simulated_s) * (last.starting + last.up + last.draining);
        g.cost = g.worker_seconds * kind.price_per_s;
      }
      add(cr.mix, g.result);
      cr.mix.worker_seconds += g.worker_seconds;
      cr.mix.cost += g.cost;
      cr.groups.push_back(std::move(g));
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
