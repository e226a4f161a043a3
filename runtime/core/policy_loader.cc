// The runtime's single door to the policy schema (see policy_loader.h).
#include "runtime/core/policy_loader.h"

#include <cmath>
#include <stdexcept>

#include <set>

#include "schema/arrival_process.h"
#include "schema/input_limits.h"
#include "schema/one_line.h"
#include "schema/policy.pb.h"
#include "schema/policy_file.h"

namespace lull::core {
namespace {

std::string num(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

CompiledPolicy convert_policy(const schema::Policy& p, const PolicyTable& table, const std::string& at,
                              const std::string& where) {
  auto fail = [&](const std::string& why) { throw std::runtime_error(where + ": " + one_line(at + why)); };
  CompiledPolicy out;
  out.load_qps = p.inputs().load_qps();
  if (!(out.load_qps > 0 && out.load_qps <= limits::kMaxLoadQps))
    fail(".inputs.load_qps must be > 0 and <= " + num(limits::kMaxLoadQps));
  const unsigned n_max = p.inputs().max_queue();
  if (n_max < 1 || n_max >= 65535) fail(".inputs.max_queue must be in 1..65534");
  out.max_queue = static_cast<int>(n_max);

  if (p.slack_grid_us_size() == 0) fail(".slack_grid_us is empty");
  if (p.slack_grid_us(0) != 0) fail(".slack_grid_us must start at 0");
  for (int j = 1; j < p.slack_grid_us_size(); ++j)
    if (!(p.slack_grid_us(j) > p.slack_grid_us(j - 1))) fail(".slack_grid_us is not strictly increasing");
  if (p.slack_grid_us(p.slack_grid_us_size() - 1) > static_cast<double>(table.slo_us) + 1)
    fail(".slack_grid_us exceeds the SLO");
  out.slack_grid_us.assign(p.slack_grid_us().begin(), p.slack_grid_us().end());

  const std::size_t grid = out.slack_grid_us.size();
  const std::size_t want = static_cast<std::size_t>(n_max) * grid + 1;
  if (static_cast<std::size_t>(p.action_model_size()) != want ||
      static_cast<std::size_t>(p.action_batch_size()) != want)
    fail(".action tables hold " + std::to_string(p.action_model_size()) +
         " states, expected N*(J+1)+1 = " + std::to_string(want));
  out.actions.resize(want);
  for (std::size_t s = 0; s < want; ++s) {
    const unsigned m = p.action_model(static_cast<int>(s));
    const unsigned b = p.action_batch(static_cast<int>(s));
    const unsigned n = s + 1 == want ? n_max + 1 : static_cast<unsigned>(s / grid) + 1;
    if (m >= table.models.size()) fail(".action_model[" + std::to_string(s) + "] names a missing model");
    if (b > n)
      fail(".action_batch[" + std::to_string(s) + "] = " + std::to_string(b) + " exceeds the queue length " +
           std::to_string(n));
    out.actions[s] = Action{static_cast<std::uint16_t>(m), static_cast<std::uint16_t>(b)};
  }
  for (const auto& model : table.models)
    if (model.latency_us.size() < n_max + 1u)
      fail(": model " + model.name + " has latencies for " + std::to_string(model.latency_us.size()) +
           " batch sizes, the policy needs N+1 = " + std::to_string(n_max + 1));
  out.expected_accuracy = p.expected().accuracy();
  out.expected_violation_rate = p.expected().violation_rate();
  return out;
}

}  // namespace

PolicyTable policy_table_from_proto(const schema::PolicySet& set, const PolicyExpectations& expect,
                                    const std::string& where) {
  auto fail = [&](const std::string& why) { throw std::runtime_error(where + ": " + one_line(why)); };
  if (!expect.task.empty() && set.task() != expect.task)
    fail("policy set is for task '" + set.task() + "', expected '" + expect.task + "'");
  if (expect.workers > 0 && static_cast<int>(set.workers()) != expect.workers)
    fail("policy set was compiled for " + std::to_string(set.workers()) + " workers, but " +
         std::to_string(expect.workers) + " were requested (recompile with --workers " +
         std::to_string(expect.workers) + ")");
  if (expect.slo_ms > 0 && std::abs(set.slo_ms() - expect.slo_ms) > 1e-9)
    fail("policy set has SLO " + num(set.slo_ms()) + " ms, expected " + num(expect.slo_ms) + " ms");
  if (!(set.slo_ms() > 0 && set.slo_ms() <= limits::kMaxSloMs))
    fail("slo_ms must be > 0 and <= " + num(limits::kMaxSloMs) + " (got " + num(set.slo_ms()) + ")");
  if (set.workers() < 1 || set.workers() > static_cast<unsigned>(limits::kMaxWorkers))
    fail("workers must be in 1.." + std::to_string(limits::kMaxWorkers) + " (got " + std::to_string(set.workers()) +
         ")");
  if (set.models_size() == 0) fail("the policy set lists no models");
  if (set.policies_size() == 0) fail("the policy set holds no policies");

  PolicyTable table;
  table.task = set.task();
  table.slo_us = static_cast<std::int64_t>(std::llround(set.slo_ms() * 1000.0));
  table.workers = static_cast<int>(set.workers());
  table.percentile = set.policies(0).inputs().percentile();
  // A process this build cannot name is refused: its expectations would be
  // read against the wrong traffic. Sets written before the field are Poisson.
  const std::string arrivals = set.arrivals().empty() ? "poisson" : set.arrivals();
  try {
    table.arrivals = parse_arrival_process(arrivals, "arrivals");
  } catch (const std::invalid_argument& e) {
    fail(std::string("unknown arrival process: ") + e.what());
  }
  std::set<std::string> names;
  for (int m = 0; m < set.models_size(); ++m) {
    const auto& e = set.models(m);
    const std::string at = "models[" + std::to_string(m) + "] (" + e.name() + ")";
    if (e.name().empty()) fail("models[" + std::to_string(m) + "].name is empty");
    if (!names.insert(e.name()).second) fail(at + ".name: duplicate model name");
    if (!(e.accuracy() >= 0 && e.accuracy() <= 1)) fail(at + ".accuracy must be in [0, 1]");
    ModelInfo info{e.name(), e.accuracy(), {e.latency_us().begin(), e.latency_us().end()}};
    for (double l : info.latency_us)
      if (!(l > 0) || !std::isfinite(l)) fail(at + ".latency_us holds a non-positive value");
    table.models.push_back(std::move(info));
  }
  for (int i = 0; i < set.policies_size(); ++i) {
    const auto& p = set.policies(i);
    const std::string at = "policies[" + std::to_string(i) + "]";
    if (p.inputs().workers() != set.workers() || p.inputs().slo_ms() != set.slo_ms())
      fail(at + ".inputs: SLO/workers differ from the set's");
    if (p.inputs().arrivals() != arrivals && !(p.inputs().arrivals().empty() && arrivals == "poisson"))
      fail(at + ".inputs.arrivals '" + p.inputs().arrivals() + "' differs from the set's '" + arrivals + "'");
    table.policies.push_back(convert_policy(p, table, at, where));
    if (i > 0 && !(table.policies[i].load_qps > table.policies[i - 1].load_qps))
      fail(at + ".inputs.load_qps: policies must be in strictly ascending load order");
  }
  return table;
}

PolicyTable load_policy_table(const std::string& path, const PolicyExpectations& expect) {
  const schema::PolicySet set = lull::read_policy_set(path);  // checksum + version
  return policy_table_from_proto(set, expect, path);
}

std::vector<PolicyTable> load_policy_library(const std::string& path, const PolicyExpectations& expect) {
  const schema::PolicyLibrary lib = lull::read_policy_library(path);  // checksums, version, ascending workers
  PolicyExpectations any_workers = expect;
  any_workers.workers = 0;
  std::vector<PolicyTable> tables;
  for (int i = 0; i < lib.sets_size(); ++i)
    tables.push_back(policy_table_from_proto(lib.sets(i), any_workers,
                                             lib.sets_size() == 1 ? path : path + ": sets[" + std::to_string(i) + "]"));
  if (tables.empty()) throw std::runtime_error(path + ": the policy library holds no policy set");
  return tables;
}

}  // namespace lull::core
