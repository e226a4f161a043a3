// One estimator online and offline (compiler/arrival_fit.h, FitScale;
// schema/burstiness_estimator.h): the same arrival stream fed to the
// runtime's load monitor and to `--fit-scale runtime`'s fit names the same
// pattern, where the whole-trace fit reads a sinusoid's rate swings as bursts;
// on stationary traffic the two scales agree.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "compiler/arrival_fit.h"
#include "runtime/core/load_monitor.h"
#include "runtime/sim/arrivals.h"

using lull::ArrivalProcess;
using lull::compiler::FitScale;

namespace {

// Poisson at rate mean * (1 + 0.5 sin(2 pi t / period)), by thinning; times in us.
std::vector<std::int64_t> sinusoid(double mean, double period_s, double seconds, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.5 * mean);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::int64_t> t;
  for (double s = gap(rng); s < seconds; s += gap(rng))
    if (u(rng) * 1.5 < 1 + 0.5 * std::sin(2 * M_PI * s / period_s)) t.push_back(std::llround(s * 1e6));
  return t;
}

std::vector<std::int64_t> stationary(const ArrivalProcess& p, double qps, int arrivals, std::uint64_t seed) {
  lull::sim::RateArrivals source({{0, 1e9, qps}}, p, seed);
  std::vector<std::int64_t> t;
  std::int64_t x = 0;
  while (static_cast<int>(t.size()) < arrivals && source.next(&x)) t.push_back(x);
  return t;
}

// The runtime's path: every arrival through a load monitor; its estimate at the end.
lull::BurstinessEstimate online(const std::vector<std::int64_t>& t) {
  lull::core::LoadMonitor monitor;
  for (auto x : t) monitor.record_arrival(x);
  return monitor.burstiness().estimate();
}

// The same family, and (not Poisson) a parameter within the pattern choice's 25%.
bool same_pattern(const ArrivalProcess& a, const ArrivalProcess& b) {
  return a.kind == b.kind && std::abs(a.burstiness() - b.burstiness()) <= 0.25 * std::max(1.0, b.burstiness());
}

}  // namespace

TEST_CASE("arrival fit at the runtime's scale: a sinusoid is Poisson online and offline", "[compiler][arrivals]") {
  // 2,676 QPS, +-50% over 60 s: the whole-trace fit reads the swings as batch:~7.
  const auto t = sinusoid(2676, 60, 60, 7);
  const auto live = online(t);
  REQUIRE(live.ready);
  const auto fit = lull::compiler::fit_arrival_process(t, FitScale::kRuntime);
  const auto whole = lull::compiler::fit_arrival_process(t, FitScale::kTrace);
  INFO(fit.reason << "\n" << whole.reason);
  CHECK(live.process.kind == ArrivalProcess::Kind::kPoisson);
  CHECK(fit.process.kind == ArrivalProcess::Kind::kPoisson);
  CHECK(whole.process.kind == ArrivalProcess::Kind::kBatch);
  CHECK(whole.process.burstiness() > 4);
}

TEST_CASE("arrival fit at the runtime's scale: stationary streams read the same online and at both scales",
          "[compiler][arrivals]") {
  const std::vector<ArrivalProcess> processes = {ArrivalProcess::poisson(), ArrivalProcess::gamma(4),
                                                 ArrivalProcess::gamma(0.3), ArrivalProcess::batch(4)};
  std::uint64_t seed = 20;
  for (const auto& p : processes) {
    const auto t = stationary(p, 1000, 40000, ++seed);
    const auto live = online(t);
    REQUIRE(live.ready);
    const auto fit = lull::compiler::fit_arrival_process(t, FitScale::kRuntime);
    const auto whole = lull::compiler::fit_arrival_process(t, FitScale::kTrace);
    INFO(lull::arrival_process_text(p) << ": online " << lull::arrival_process_text(live.process) << "; " << fit.reason
                                       << "; " << whole.reason);
    CHECK(same_pattern(fit.process, live.process));
    CHECK(fit.process.kind == whole.process.kind);
    CHECK(same_pattern(fit.process, p.kind == ArrivalProcess::Kind::kPoisson ? ArrivalProcess::poisson() : p));
  }
}

TEST_CASE("arrival fit at the runtime's scale: the flag's text and a trace it cannot read", "[compiler][arrivals]") {
  CHECK(lull::compiler::parse_fit_scale("trace") == FitScale::kTrace);
  CHECK(lull::compiler::parse_fit_scale("runtime") == FitScale::kRuntime);
  CHECK_THROWS_WITH(lull::compiler::parse_fit_scale("window"), Catch::Contains("--fit-scale: trace or runtime"));
  // The rate doubles every 1000 arrivals: the runtime's bins never fill a window.
  std::vector<std::int64_t> t;
  std::int64_t x = 0, gap = 1 << 20;
  for (int i = 0; i < 4000; ++i) {
    if (i % 1000 == 0 && gap > 1) gap /= 8;
    t.push_back(x += std::max<std::int64_t>(1, gap));
  }
  CHECK_THROWS_WITH(lull::compiler::fit_arrival_process(t, FitScale::kRuntime), Catch::Contains("never ready"));
}
