// `lull simulate` on a fleet policy file (docs/operators-guide.md): a small synthetic
// fleet (tiny_profile and a 0.6x-latency copy of it as a faster kind; two
// classes) whose simulated accuracy and violation per class agree with the
// expectation mixed from each kind's compiled policies at the load its split
// weight gives it; every query accounted for; bad input: one line, exit 2.
#include <catch2/catch.hpp>

#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "schema/fleet_file.h"
#include "schema/policy_file.h"
#include "test/support/cli_runner.h"

namespace {

using Outcome = lull::test::CliOutcome;

Outcome run_lull(const std::string& args) { return lull::test::run_cli(std::string(LULL_BINARY) + " " + args); }

std::string dir() {
  const auto d = std::filesystem::temp_directory_path() / "lull_fleet_sim_cli";
  std::filesystem::create_directories(d);
  return d.string();
}

std::string tiny_profile() { return std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json"; }

// tiny_profile with every latency times 0.6: the faster kind.
std::string fast_profile() {
  const std::string path = dir() + "/tiny_fast.json";
  std::ofstream(path) << R"({"task": "tiny", "provenance": "synthetic: tiny_profile at 0.6x latency", "synthetic": true,
  "models": [
    {"name": "fast", "accuracy": 0.6, "latencies": [{"batch": 1, "samples_s": [0.0024, 0.003, 0.0027]},
      {"batch": 2, "latency_s": 0.0036}, {"batch": 4, "latency_s": 0.0054}, {"batch": 8, "latency_s": 0.009}]},
    {"name": "slow", "accuracy": 0.8, "latencies": [{"batch": 1, "latency_s": 0.0072},
      {"batch": 2, "latency_s": 0.0096}, {"batch": 4, "latency_s": 0.0144}, {"batch": 8, "latency_s": 0.024}]}]})";
  return path;
}

// One policy set compiled for `workers` at one load.
lull::schema::PolicySet compiled(const std::string& profile, double slo_ms, int workers, double load_qps) {
  const std::string out = dir() + "/set_" + std::filesystem::path(profile).stem().string() + "_" +
                          std::to_string(static_cast<int>(slo_ms)) + "_" + std::to_string(static_cast<int>(load_qps)) +
                          ".pb";
  const Outcome c = run_lull("compile --profiles " + profile + " --slo-ms " + std::to_string(slo_ms) + " --workers " +
                             std::to_string(workers) + " --load-qps " + std::to_string(load_qps) +
                             " --max-queue 8 --intervals 20 --device cpu --out " + out);
  INFO(c.output);
  REQUIRE(c.code == 0);
  return lull::read_policy_set(out);
}

struct KindSpec {
  std::string name, profile;
  int workers;
  double weight;
};

// A class with one split at its load; its expectation mixed from the kinds'
// compiled ones by hand (docs/operators-guide.md): violation sum w v, accuracy
// sum w (1 - v) a / sum w (1 - v).
struct Expected {
  double accuracy, violation;
};
Expected add_class(lull::schema::FleetPolicy& fleet, const std::string& name, double slo_ms, double share,
                   double class_load, const std::vector<KindSpec>& kinds) {
  auto* c = fleet.add_classes();
  c->set_name(name);
  c->set_slo_ms(slo_ms);
  c->set_share(share);
  c->set_max_violation(0.01);
  auto* split = c->add_splits();
  split->set_load_qps(class_load);
  double v = 0, sat = 0, acc = 0;
  for (const auto& k : kinds) {
    auto* kp = c->add_kinds();
    kp->set_kind(k.name);
    kp->set_workers(static_cast<unsigned>(k.workers));
    kp->set_price_per_s(1);
    *kp->mutable_library()->add_sets() = compiled(k.profile, slo_ms, k.workers, k.weight * class_load);
    split->add_weights(k.weight);
    const auto& e = kp->library().sets(0).policies(0).expected();
    v += k.weight * e.violation_rate();
    sat += k.weight * (1 - e.violation_rate());
    acc += k.weight * (1 - e.violation_rate()) * e.accuracy();
  }
  split->set_accuracy(acc / sat);
  split->set_violation_rate(v);
  return {acc / sat, v};
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void expect_usage_error(const std::string& args, const std::string& needle) {
  const Outcome o = run_lull("simulate " + args);
  INFO("lull simulate " << args << "\n" << o.output);
  CHECK(o.code == 2);
  CHECK(lines(o.output) == 1);
  CHECK(o.output.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("lull simulate on a fleet file agrees with the fleet's expectations", "[sim][cli][fleet]") {
  // Fleet load 1000 QPS: interactive (20 ms) 700 QPS over base 30% / fast 70%;
  // bulk (40 ms) 300 QPS on base alone.
  lull::schema::FleetPolicy fleet;
  const Expected interactive = add_class(fleet, "interactive", 20, 0.7, 700,
                                         {{"base", tiny_profile(), 2, 0.3}, {"fast", fast_profile(), 2, 0.7}});
  const Expected bulk = add_class(fleet, "bulk", 40, 0.3, 300, {{"base", tiny_profile(), 2, 1.0}});
  // Expectations with something to check: violations not all zero.
  REQUIRE(interactive.violation > 0.001);
  const std::string pb = dir() + "/fleet.pb", out = dir() + "/fleet_result.json";
  lull::write_fleet_policy(fleet, pb);
  std::filesystem::remove(out);
  const Outcome o = run_lull("simulate --policies " + pb + " --load-qps 1000 --duration-s 120 --seed 5 --out " + out);
  INFO(o.output);
  REQUIRE(o.code == 0);
  CHECK(o.output.find("class interactive: ") != std::string::npos);
  CHECK(o.output.find("fleet: ") != std::string::npos);

  simdjson::dom::parser parser;
  const simdjson::dom::element r = parser.load(out);
  const double seconds = 120;
  std::uint64_t fleet_queries = 0;
  for (std::size_t c = 0; c < 2; ++c) {
    const auto cls = r["classes"].at(c);
    const Expected e = c == 0 ? interactive : bulk;
    const double load = c == 0 ? 700 : 300;
    INFO("class " << std::string_view(cls["name"]));
    CHECK(double(cls["expected_accuracy"]) == Approx(e.accuracy).margin(1e-9));
    CHECK(double(cls["expected_violation_rate"]) == Approx(e.violation).margin(1e-9));
    CHECK(double(cls["accuracy_per_satisfied_query"]) == Approx(e.accuracy).margin(0.01));
    CHECK(double(cls["violation_rate"]) == Approx(e.violation).margin(0.005));
    // The class's Poisson stream (5 sigma), split over its kinds by weight.
    const auto queries = std::uint64_t(cls["queries"]);
    CHECK(std::abs(double(queries) - load * seconds) < 5 * std::sqrt(load * seconds));
    CHECK(std::uint64_t(cls["dropped"]) == 0);
    std::uint64_t sum = 0;
    for (const auto kind : cls["kinds"].get_array()) {
      const auto n = std::uint64_t(kind["result"]["queries"]);
      const double w = double(kind["weight"]);
      CHECK(std::abs(double(n) - w * double(queries)) < 5 * std::sqrt(w * (1 - w) * double(queries)) + 1);
      CHECK(std::uint64_t(kind["result"]["completed"]) == n);
      CHECK(double(kind["worker_seconds"]) == Approx(2 * seconds));
      sum += n;
    }
    CHECK(sum == queries);
    fleet_queries += queries;
  }
  CHECK(std::uint64_t(r["fleet"]["queries"]) == fleet_queries);
  CHECK(double(r["fleet"]["worker_seconds"]) == Approx(6 * seconds));

  // The same seed, the same run.
  const std::string again = dir() + "/fleet_again.json";
  REQUIRE(run_lull("simulate --policies " + pb + " --load-qps 1000 --duration-s 120 --seed 5 --out " + again).code ==
          0);
  simdjson::dom::parser parser2;
  CHECK(std::uint64_t(parser2.load(again)["fleet"]["violated"]) == std::uint64_t(r["fleet"]["violated"]));

  // --autoscale: every group its own autoscaler, reported as lull simulate
  // --autoscale reports one system (here each kind's library holds its file
  // count alone, so floor and ceiling are that count); the scale log's lines
  // name the class and kind.
  const std::string scaled = dir() + "/fleet_scaled.json", scale_log = dir() + "/fleet_scale.log";
  const Outcome a = run_lull("simulate --policies " + pb + " --load-qps 1000 --duration-s 30 --seed 5 --autoscale " +
                             "--autoscale-log " + scale_log + " --out " + scaled);
  INFO(a.output);
  REQUIRE(a.code == 0);
  CHECK(a.output.find("workers at the start") != std::string::npos);
  simdjson::dom::parser parser3;
  const simdjson::dom::element s = parser3.load(scaled);
  for (const auto cls : s["classes"].get_array())
    for (const auto kind : cls["kinds"].get_array()) {
      const auto result = kind["result"];
      CHECK(std::int64_t(result["autoscale"]["floor"]) == 2);
      CHECK(std::int64_t(result["autoscale"]["ceiling"]) == 2);
      CHECK(double(result["autoscale"]["max_violation"]) == Approx(0.01));  // the class's
      CHECK(result["workers_over_time"].get_array().size() >= 1);
      CHECK(double(kind["worker_seconds"]) == Approx(2 * 30).margin(0.5));
    }
  CHECK(std::filesystem::exists(scale_log));

  // What a fleet run cannot take: one line, exit 2, nothing written.
  const std::string bad_out = dir() + "/bad.json", o2 = " --out " + bad_out;
  expect_usage_error("--policies " + pb + " --load-qps 100 --autoscale --max-violation 0.05" + o2,
                     "--max-violation: not with a fleet");
  expect_usage_error("--policies " + pb + " --load-qps 100 --min-workers 2" + o2, "--min-workers: not with a fleet");
  std::filesystem::remove(bad_out);
  expect_usage_error("--policies " + pb + " --load-qps 100 --workers 4" + o2, "--workers: not with a fleet");
  expect_usage_error("--policies " + pb + " --load-qps 100 --trace constant:100:5" + o2, "one of them");
  expect_usage_error("--policies " + pb + o2, "--load-qps");
  expect_usage_error("--policies " + pb + " --load-qps -3" + o2, "--load-qps");
  expect_usage_error("--policies " + pb + " --trace arrivals:" + pb + o2, "a fleet needs rates");
  expect_usage_error("--policies " + pb + " --load-qps 100 --latency sampled" + o2, "--latency sampled");
  expect_usage_error("--policies " + pb + " --load-qps 100 --scheduler jellyfish" + o2, "--scheduler");
  CHECK_FALSE(std::filesystem::exists(bad_out));
  // --load-qps is a fleet's flag.
  const std::string set = dir() + "/set_tiny_profile_40_300.pb";
  expect_usage_error("--policies " + set + " --workers 2 --load-qps 100 --trace constant:100:5" + o2,
                     "--load-qps applies to a fleet");
  expect_usage_error("--policies " + set + " --workers 2 --duration-s 9 --trace constant:100:5" + o2,
                     "--duration-s applies to a fleet");
}
