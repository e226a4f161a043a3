// The load monitor's per-arrival cost with the burstiness estimator
// (target: <= 50 ns per arrival), on pre-drawn gamma:4 arrivals at
// 1000 QPS, and the estimate() call the Dispatcher makes once per closed bin.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "runtime/core/burstiness_estimator.h"
#include "runtime/core/load_monitor.h"
#include "runtime/sim/arrivals.h"

namespace {

std::vector<std::int64_t> gamma_arrivals(std::size_t n) {
  lull::sim::RateArrivals source({{0, 1e9, 1000}}, lull::ArrivalProcess::gamma(4), 7);
  std::vector<std::int64_t> t(n);
  for (auto& x : t) source.next(&x);
  return t;
}

void BM_BurstinessRecord(benchmark::State& state) {
  const auto t = gamma_arrivals(1 << 20);
  lull::core::BurstinessEstimator e;
  std::size_t i = 0;
  std::int64_t offset = 0;
  for (auto _ : state) {
    e.record(t[i] + offset);
    if (++i == t.size()) i = 0, offset += t.back() + 1;
  }
  benchmark::DoNotOptimize(e.bins_closed());
}
BENCHMARK(BM_BurstinessRecord)->Repetitions(5)->ReportAggregatesOnly(true);

// The whole load monitor per arrival: rate window and burstiness.
void BM_LoadMonitorArrival(benchmark::State& state) {
  const auto t = gamma_arrivals(1 << 20);
  lull::core::LoadMonitor m;
  std::size_t i = 0;
  std::int64_t offset = 0;
  for (auto _ : state) {
    const std::int64_t now = t[i] + offset;
    m.record_arrival(now);
    benchmark::DoNotOptimize(m.estimate_qps(now));
    if (++i == t.size()) i = 0, offset += t.back() + 1;
  }
}
BENCHMARK(BM_LoadMonitorArrival)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_BurstinessEstimate(benchmark::State& state) {
  const auto t = gamma_arrivals(20000);
  lull::core::BurstinessEstimator e;
  for (auto x : t) e.record(x);
  for (auto _ : state) benchmark::DoNotOptimize(e.estimate());
}
BENCHMARK(BM_BurstinessEstimate)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace
