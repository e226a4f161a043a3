// One selection: (queue length, earliest slack) -> state -> table lookup.
// Target: at most 100 ns median; the same while policies are
// swapped in from another thread, or replaced.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "runtime/core/model_selector.h"
#include "runtime/core/policy_catalog.h"
#include "runtime/core/policy_inbox.h"
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
    benchmark::DoNotOptimize(lull::core::select_action(policy, q.first, q.second));
  }
}
BENCHMARK(BM_SelectAction)->Repetitions(5)->ReportAggregatesOnly(true);

// The same selection while policies are swapped in: another thread posts a
// new policy to the inbox every `period`, and the selecting thread does what
// the Dispatcher does per decision (check the inbox; when there is mail,
// apply it to the catalog and choose again; then select on the policy in
// use). A swap never takes a lock the selection waits on: the check is one
// atomic load, and only the selecting thread touches the catalog.
// `replaces`: every post replaces the set (--recompile-on-drift) instead of
// adding a load (online compilation); posted less often, as each replaced
// table stays alive for the catalog's life.
void select_during_mail(benchmark::State& state, bool replaces, std::chrono::microseconds period) {
  const auto table = lull::bench::production_shaped_table();
  lull::core::PolicyCatalog catalog({table});
  lull::core::PolicyInbox inbox;
  std::atomic<bool> stop{false};
  std::atomic<int> posted{0};
  std::thread poster([&] {
    for (int i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      lull::core::PolicyTable one = table;
      one.policies.resize(1);
      one.policies[0] = table.policies[static_cast<std::size_t>(i % 20)];
      one.policies[0].load_qps = 4000 + i;  // a load not yet held: a real addition
      if (replaces)
        inbox.post_replacement(std::move(one));
      else
        inbox.post(std::move(one));
      posted.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(period);
    }
  });
  std::mt19937_64 rng(42);
  std::vector<std::pair<int, std::int64_t>> queues(4096);
  for (auto& q : queues) {
    q.first = 1 + static_cast<int>(rng() % 36);
    q.second = static_cast<std::int64_t>(rng() % 160'000) - 10'000;
  }
  lull::core::PolicyChoice choice = catalog.choose(table.workers, 2000, true);
  std::size_t i = 0;
  std::uint64_t swaps = 0;
  for (auto _ : state) {
    if (inbox.has_mail()) {
      for (const auto& m : inbox.take()) catalog.apply(m);
      choice = catalog.choose(table.workers, catalog.entry(catalog.size() - 1).policy->load_qps, true);
      ++swaps;
    }
    const auto& q = queues[i++ & 4095];
    benchmark::DoNotOptimize(lull::core::select_action(*choice.policy, q.first, q.second));
  }
  stop = true;
  poster.join();
  state.counters["swaps"] = static_cast<double>(swaps);
  state.counters["posted"] = static_cast<double>(posted.load());
}

void BM_SelectActionDuringSwaps(benchmark::State& state) {
  select_during_mail(state, false, std::chrono::microseconds(200));
}
BENCHMARK(BM_SelectActionDuringSwaps)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_SelectActionDuringReplacements(benchmark::State& state) {
  select_during_mail(state, true, std::chrono::microseconds(5000));
}
BENCHMARK(BM_SelectActionDuringReplacements)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace
