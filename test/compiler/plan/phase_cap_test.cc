// The large-fleet phase model (--phase-cap, docs/user-guide.md "Large fleets"):
// what it changes in the arrival model, that a capped count is the cap's
// problem at its load per worker, that the planner's cache shares those
// solves, and its error against the exact MDP where the exact one runs.
#include <catch2/catch.hpp>

#include <cmath>

#include "compiler/compile_sweep.h"
#include "compiler/mdp/arrival_model.h"
#include "compiler/plan/expectation_cache.h"
#include "compiler/plan/worker_search.h"
#include "compiler/solver/solver_registry.h"
#include "test/support/shared_data.h"
#include "test/support/synthetic_profiles.h"

using namespace lull;
using namespace lull::compiler;

TEST_CASE("phase cap: counts at or below the cap keep their model, counts above it get cap phases at their rate") {
  const ArrivalModel exact = arrival_model(ArrivalProcess::poisson(), 50, 2500);
  const ArrivalModel below = arrival_model(ArrivalProcess::poisson(), 50, 2500, 50);
  CHECK(below.phases == 50);
  CHECK(below.rate_per_us == exact.rate_per_us);
  CHECK(below.capped_from == 0);
  CHECK(below.exact);

  const ArrivalModel capped = arrival_model(ArrivalProcess::poisson(), 500, 25000, 50);
  CHECK(capped.phases == 50);
  CHECK(capped.capped_from == 500);
  CHECK_FALSE(capped.exact);
  CHECK(capped.rate_per_us * 1e6 / capped.phases == Approx(25000.0 / 500));  // the worker's own rate

  // Gamma whose K / CV^2 passes the cap: Poisson's capped model.
  const ArrivalModel gamma = arrival_model(ArrivalProcess::gamma(4), 500, 25000, 50);
  CHECK(gamma.phases == 50);
  CHECK(gamma.dispersion == 1);
  CHECK(gamma.capped_from == 125);
  CHECK(gamma.rate_per_us == Approx(capped.rate_per_us));
  // ... and below it, its own model.
  CHECK(arrival_model(ArrivalProcess::gamma(4), 160, 8000, 50).capped_from == 0);
  CHECK(arrival_model(ArrivalProcess::gamma(4), 160, 8000, 50).phases == 40);

  // batch:D keeps its bursts over cap workers.
  const ArrivalModel batch = arrival_model(ArrivalProcess::batch(3), 500, 25000, 50);
  CHECK(batch.phases == 50);
  CHECK(batch.dispersion == 3);
  CHECK(batch.rate_per_us * 1e6 == Approx(25000.0 / 500 * 50));
}

TEST_CASE("phase cap: a count above the cap compiles to the cap's exact problem at the same load per worker") {
  const ReducedProfiles p = test::linear_models(3, 8);
  auto solver = make_solver("cpu", nullptr);
  CompileSpec spec;
  spec.mdp = test::mdp_options(60000, 40, 1, 8, 20);
  spec.mdp.phase_cap = 10;
  spec.device = "cpu";
  const LoadReport capped = compile_load(p, spec, 40 * 30.0, *solver);
  CompileSpec at_cap = spec;
  at_cap.mdp.workers = 10;
  at_cap.mdp.phase_cap = 0;
  const LoadReport exact_at_cap = compile_load(p, at_cap, 10 * 30.0, *solver);
  CHECK(capped.expected_violation_rate == exact_at_cap.expected_violation_rate);
  CHECK(capped.expected_accuracy == exact_at_cap.expected_accuracy);
  CHECK(solver_mode(spec) == "intervals=20+max-queue=8+phase-cap=10");
  spec.mdp.workers = 10;
  CHECK(solver_mode(spec) == "intervals=20+max-queue=8");  // the cap does not apply
}

TEST_CASE("phase cap: the planner's cache solves a capped load per worker once, for every count and pattern") {
  const ReducedProfiles p = test::linear_models(3, 8);
  auto solver = make_solver("cpu", nullptr);
  CompileSpec spec;
  spec.mdp = test::mdp_options(60000, 1, 1, 8, 20);
  spec.mdp.phase_cap = 10;
  spec.device = "cpu";
  ExpectationCache cache(p, spec, *solver);
  CHECK(cache.is_capped(11));
  CHECK_FALSE(cache.is_capped(10));
  // 20 and 40 workers at the same load per worker, and a load 2% below on
  // the lattice: two solves.
  const auto e = cache.at({{20, 20 * 30.0}, {40, 40 * 30.0}, {40, 40 * 30.0 / 1.02}, {20, 20 * 30.0 / 1.02}});
  CHECK(cache.solves() == 2);
  CHECK(e[0].violation_rate == e[1].violation_rate);
  CHECK(e[2].accuracy == e[3].accuracy);
  // Rounded up: the expectation of a load at most one lattice step (0.5%) above.
  CompileSpec at_cap = spec;
  at_cap.mdp.workers = 10;
  at_cap.mdp.phase_cap = 0;
  const double n = std::ceil(std::log(300.0) / std::log(1.02) * kCapLatticeSteps - 1e-6);
  const double lattice = std::pow(1.02, n / kCapLatticeSteps);
  CHECK(lattice >= 300.0);
  CHECK(lattice <= 300.0 * std::pow(1.02, 1.0 / kCapLatticeSteps) * (1 + 1e-12));
  CHECK(compile_load(p, at_cap, lattice, *solver).expected_violation_rate == e[0].violation_rate);
  // A Gamma pattern capped at the same count shares the Poisson solves.
  CompileSpec gamma = spec;
  gamma.mdp.arrivals = ArrivalProcess::gamma(2);
  ExpectationCache bursty(p, gamma, *solver, cache.capped());
  CHECK(bursty.at(40, 40 * 30.0).violation_rate == e[1].violation_rate);
  CHECK(bursty.solves() == 0);
}

TEST_CASE("phase cap: error against the exact MDP at 240 workers (image task, cap 120)", "[artifact]") {
  LULL_REQUIRE_ARTIFACT();
  // A small copy of the measured error of lull plan's cap (240 against exact
  // 480 and 960, experiments/results/fleet_scale.md: violation up to 1.4
  // points higher next to the fastest model's limit, accuracy within 0.43
  // points): here, at loads per worker up to 56.5, the capped violation is
  // within a point of the exact one and the accuracy within 0.5 points; the
  // capacity per worker at most 2% lower and not higher (up to the lattice's
  // 0.5%), so a plan needs at most 2% more workers.
  auto solver = make_solver("cpu", nullptr);
  CompileSpec spec;
  spec.mdp = test::mdp_options(150000, 240, 1, 32, 100);
  spec.device = "cpu";
  CompileSpec capped = spec;
  capped.mdp.phase_cap = 120;
  for (double per_worker : {50.0, 55.0, 56.5}) {
    const LoadReport e = compile_load(test::golden_profiles(), spec, 240 * per_worker, *solver);
    const LoadReport c = compile_load(test::golden_profiles(), capped, 240 * per_worker, *solver);
    INFO(per_worker << " QPS per worker: exact " << e.expected_violation_rate << " / " << e.expected_accuracy
                    << ", capped " << c.expected_violation_rate << " / " << c.expected_accuracy);
    CHECK(std::abs(c.expected_violation_rate - e.expected_violation_rate) <= 0.01);
    CHECK(std::abs(c.expected_accuracy - e.expected_accuracy) <= 0.005);
  }
  const PlanTarget target{0.01, 0};
  ExpectationCache exact_cache(test::golden_profiles(), spec, *solver);
  ExpectationCache capped_cache(test::golden_profiles(), capped, *solver);
  const CapacityRow e = capacity_table(exact_cache, {240}, target).front();
  const CapacityRow c = capacity_table(capped_cache, {240}, target).front();
  INFO("capacity at 240 workers: exact " << e.max_load_qps << ", capped " << c.max_load_qps);
  CHECK(c.max_load_qps <= e.max_load_qps * 1.005);  // the lattice rounds the load up by at most 0.5%
  CHECK(c.max_load_qps >= e.max_load_qps / 1.02);
}
