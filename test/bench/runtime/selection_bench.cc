// One selection: (queue length, earliest slack) -> state -> table lookup.
// Target (issue 3): at most 100 ns median.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "runtime/model_selector.h"
#include "test/bench/runtime/bench_tables.h"

namespace {

void BM_SelectAction(benchmark::State& state) {
  const auto table = lull::bench::production_shaped_table();
  const auto& policy = table.policies[10];
  // Pre-drawn queue states, mostly short queues as in a loaded system, some
  // late and some beyond N to exercise every branch.
  std::mt19937_64 rng(42);
  std::vector<std::pair<int, std::int64_t>> queues(4096);
  for (auto& q : queues) {
    q.first = 1 + static_cast<int>(rng() % 36);
    q.second = static_cast<std::int64_t>(rng() % 160'000) - 10'000;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& q = queues[i++ & 4095];
    benchmark::DoNotOptimize(lull::runtime::select_action(policy, q.first, q.second));
  }
}
BENCHMARK(BM_SelectAction)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace
