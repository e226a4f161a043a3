// Whole simulations on the production-shaped table: 60 workers, the load
// swept like the Twitter trace (1,600 -> 3,900 QPS over 270 s, ~750k queries).
#include <benchmark/benchmark.h>

#include "runtime/sim/latency_model.h"
#include "runtime/sim/simulator.h"
#include "test/bench/runtime/bench_tables.h"

namespace {

void BM_SimulateTraceShape(benchmark::State& state) {
  const auto table = lull::bench::production_shaped_table();
  std::vector<lull::sim::RateSegment> segs;
  for (int i = 0; i < 27; ++i) segs.push_back({i * 10.0, i * 10.0 + 10, 1600 + 88.0 * i});
  std::uint64_t queries = 0;
  for (auto _ : state) {
    lull::sim::RateArrivals arrivals(segs, lull::sim::ArrivalProcess{}, 1);
    lull::sim::CompiledLatency latency(table);
    const auto r = lull::sim::simulate(table, arrivals, latency, lull::sim::SimOptions{});
    queries = r.arrivals;
    benchmark::DoNotOptimize(r.accuracy_per_satisfied_query);
  }
  state.counters["queries"] = static_cast<double>(queries);
}
BENCHMARK(BM_SimulateTraceShape)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
