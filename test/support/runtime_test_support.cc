#include "test/support/runtime_test_support.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "compiler/profile/artifact_import.h"
#include "compiler/profile/profile_reduction.h"
#include "runtime/core/policy_loader.h"
#include "schema/policy_file.h"
#include "test/support/golden_records.h"

namespace lull::test {

core::PolicyTable three_models(const std::vector<double>& loads_qps) {
  core::PolicyTable t;
  t.task = "three";
  t.slo_us = 100'000;
  t.workers = 1;
  const char* names[3] = {"fast", "mid", "slow"};
  const double acc[3] = {0.5, 0.7, 0.9};
  const std::vector<double> lat_ms[3] = {{10, 12, 14, 16, 18}, {20, 30, 40, 50, 60}, {30, 50, 70, 90, 110}};
  for (int m = 0; m < 3; ++m) {
    core::ModelInfo info{names[m], acc[m], {}};
    for (double l : lat_ms[m]) info.latency_us.push_back(l * 1000);
    t.models.push_back(info);
  }
  for (double q : loads_qps) {
    core::CompiledPolicy p;
    p.load_qps = q;
    t.policies.push_back(p);
  }
  return t;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "lull_runtime_tests";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::vector<std::int64_t> drain(sim::ArrivalSource& src) {
  std::vector<std::int64_t> out;
  for (std::int64_t t; src.next(&t);) out.push_back(t);
  return out;
}

bool have_golden_and_artifact() {
  const std::string s = shared_dir();
  return std::filesystem::exists(s + "/golden/image_fld100_max.json") &&
         std::filesystem::exists(s + "/ramsis-artifact/profiles/image_cloud_cpu") &&
         std::filesystem::exists(s + "/ramsis-artifact/image_accuracy.json");
}

schema::PolicySet tiny_policy_set() {
  schema::PolicySet set;
  set.set_task("tiny");
  set.set_slo_ms(150);
  set.set_workers(2);
  const double base_ms[2] = {10, 40}, per_ms[2] = {10, 20}, acc[2] = {0.5, 0.9};
  for (int m = 0; m < 2; ++m) {
    auto* e = set.add_models();
    e->set_name(m == 0 ? "fast" : "slow");
    e->set_accuracy(acc[m]);
    for (int b = 1; b <= 3; ++b) e->add_latency_us((base_ms[m] + per_ms[m] * (b - 1)) * 1000);
  }
  for (double load : {100.0, 200.0}) {
    auto* p = set.add_policies();
    auto* in = p->mutable_inputs();
    in->set_task("tiny");
    in->set_slo_ms(150);
    in->set_workers(2);
    in->set_load_qps(load);
    in->set_max_queue(2);
    in->set_percentile(95);
    for (double t : {0.0, 50000.0, 100000.0}) p->add_slack_grid_us(t);
    const int states = 2 * 3 + 1;
    for (int s = 0; s < states; ++s) {
      const bool full = s == states - 1;
      p->add_action_model(full ? 0 : s % 2);
      p->add_action_batch(full ? 3 : s / 3 + 1);
    }
    p->set_num_states(3 * 3 + 1);
    p->mutable_expected()->set_accuracy(0.7);
    p->mutable_expected()->set_violation_rate(0.01);
  }
  seal_policy_set(set);
  return set;
}

core::PolicyTable tiny_table() { return core::policy_table_from_proto(tiny_policy_set(), {}, "tiny"); }

std::vector<core::PolicyTable> tiny_scaling_library() {
  std::vector<core::PolicyTable> lib;
  for (int k : {2, 4, 6, 8}) {
    core::PolicyTable t = tiny_table();
    t.workers = k;
    t.policies[0].load_qps = 10.0 * k;
    t.policies[0].expected_violation_rate = 0.001;
    t.policies[1].load_qps = 20.0 * k;
    t.policies[1].expected_violation_rate = 0.05;
    lib.push_back(t);
  }
  return lib;
}

namespace {

std::vector<GoldenCase> load_golden() {
  const std::string shared = shared_dir();
  const auto& records = golden_records();
  const std::string artifact = shared + "/ramsis-artifact/profiles/image_cloud_cpu";
  compiler::ReductionOptions opts;
  opts.models = records.front().models;
  const auto reduced = compiler::reduce_profiles(
      compiler::import_artifact_profiles(artifact, shared + "/ramsis-artifact/image_accuracy.json", "image"), opts, 32,
      artifact);

  std::vector<GoldenCase> out;
  for (const auto& r : records) {
    GoldenCase g;
    g.workers = r.workers;
    g.load_qps = r.load_qps;
    g.expected_accuracy = r.accuracy;
    g.expected_violation_rate = r.violation_rate;
    g.set.set_task("image");
    g.set.set_slo_ms(r.slo_ms);
    g.set.set_workers(static_cast<unsigned>(g.workers));
    for (const auto& m : reduced.models) {
      auto* e = g.set.add_models();
      e->set_name(m.name);
      e->set_accuracy(m.accuracy);
      for (double l : m.latency_us) e->add_latency_us(l);
    }
    auto* p = g.set.add_policies();
    auto* in = p->mutable_inputs();
    in->set_task("image");
    in->set_slo_ms(r.slo_ms);
    in->set_workers(static_cast<unsigned>(g.workers));
    in->set_load_qps(g.load_qps);
    in->set_max_queue(static_cast<unsigned>(r.max_queue));
    in->set_percentile(95);
    for (int j = 0; j <= r.intervals; ++j) p->add_slack_grid_us(j * r.slo_ms * 1000.0 / r.intervals);
    // Rows [n, j, model, batch] in state order (1,0)..(N,J), F.
    int index = 0;
    for (const auto& row : r.policy) {
      const int want = row.n > r.max_queue ? r.max_queue * (r.intervals + 1) : (row.n - 1) * (r.intervals + 1) + row.j;
      if (want != index++) throw std::runtime_error("golden policy rows are not in state order");
      p->add_action_model(static_cast<unsigned>(row.model));
      p->add_action_batch(static_cast<unsigned>(row.batch));
    }
    p->mutable_expected()->set_accuracy(g.expected_accuracy);
    p->mutable_expected()->set_violation_rate(g.expected_violation_rate);
    seal_policy_set(g.set);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases = load_golden();
  return cases;
}

}  // namespace lull::test
