// lull policy show / dump: read a policy set (verified, then checked by the
// runtime's loader, the same checks simulate and serve make) and print it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/compile_options.h"
#include "cli/fleet_report.h"
#include "cli/json_object.h"
#include "cli/option_ranges.h"
#include "cli/output_file.h"
#include "runtime/core/fleet_tables.h"
#include "runtime/core/policy_loader.h"
#include "schema/fleet_file.h"
#include "schema/input_limits.h"
#include "schema/policy_file.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {

const char* name_of(schema::Discretization d) { return d == schema::MD ? "MD" : "FLD"; }
const char* name_of(schema::Batching b) { return b == schema::VARIABLE ? "variable" : "maximal"; }

// (n, j) of the i-th action-table row: (1,0),(1,1),...,(N,J), then F = (N+1, 0).
std::pair<int, int> row_state(int i, int J1, int N) {
  const int n = i / J1 + 1;
  return n > N ? std::make_pair(N + 1, 0) : std::make_pair(n, i % J1);
}

// A set these commands print is one simulate and serve would run: a sealed
// set that breaks the runtime's invariants is refused with the same error.
// From a library, the set for `workers` (0: the file must hold one set).
schema::PolicySet read_checked_policy_set(const std::string& path, unsigned workers = 0) {
  const auto lib = read_policy_library(path);
  std::string counts;
  for (const auto& set : lib.sets()) {
    if (workers == 0 ? lib.sets_size() == 1 : set.workers() == workers) {
      core::policy_table_from_proto(set, {}, path);
      return set;
    }
    counts += (counts.empty() ? "" : ", ") + std::to_string(set.workers());
  }
  if (workers == 0)
    throw UsageError(path + " is a policy library (workers " + counts + "): pick a set with --workers K");
  throw UsageError("--workers: " + path + " has no set for " + std::to_string(workers) + " workers (it has " + counts +
                   ")");
}

}  // namespace

namespace {

// A library: one line per worker count (loads, load range, expectation ranges).
void show_library(const std::string& path, const schema::PolicyLibrary& lib) {
  const auto& first = lib.sets(0);
  std::printf("policy library %s (format %u, checksum %016llx)\n", path.c_str(), lib.format_version(),
              static_cast<unsigned long long>(lib.checksum()));
  std::set<unsigned> counts;
  for (const auto& set : lib.sets()) counts.insert(set.workers());
  if (static_cast<int>(counts.size()) == lib.sets_size())
    std::printf("task %s, SLO %g ms, %d worker counts\n", first.task().c_str(), first.slo_ms(), lib.sets_size());
  else  // several arrival processes per worker count
    std::printf("task %s, SLO %g ms, %d sets over %zu worker counts\n", first.task().c_str(), first.slo_ms(),
                lib.sets_size(), counts.size());
  std::string models;
  for (const auto& m : first.models()) models += (models.empty() ? "" : ", ") + m.name();
  std::printf("models: %s\n", models.c_str());
  std::printf("\n  workers  arrivals    loads  load QPS            exp. accuracy        exp. violation\n");
  for (const auto& set : lib.sets()) {
    double acc_lo = 1, acc_hi = 0, v_lo = 1, v_hi = 0;
    for (const auto& p : set.policies()) {
      acc_lo = std::min(acc_lo, p.expected().accuracy());
      acc_hi = std::max(acc_hi, p.expected().accuracy());
      v_lo = std::min(v_lo, p.expected().violation_rate());
      v_hi = std::max(v_hi, p.expected().violation_rate());
    }
    char loads[48];
    std::snprintf(loads, sizeof loads, "%g..%g", set.policies(0).inputs().load_qps(),
                  set.policies(set.policies_size() - 1).inputs().load_qps());
    std::printf("  %7u  %-10s  %5d  %-18s  %.4f..%.4f     %.4f..%.4f\n", set.workers(),
                set.policies(0).inputs().arrivals().c_str(), set.policies_size(), loads, acc_lo, acc_hi, v_lo, v_hi);
  }
}

// The summary `policy show` prints, as JSON (--json): the same facts, for scripts.
JsonValue model_share_json(const schema::PolicySet& set, const schema::Policy& p) {
  auto shares = JsonValue::object();
  if (p.expected().model_share_size() == set.models_size())
    for (int m = 0; m < set.models_size(); ++m) shares.add(set.models(m).name(), p.expected().model_share(m));
  return shares;
}

std::string set_json(const std::string& path, const schema::PolicySet& set) {
  auto j = JsonValue::object();
  j.add("file", path);
  j.add("kind", "policy set");
  j.add("format_version", set.format_version());
  char checksum[24];
  std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(set.checksum()));
  j.add("checksum", checksum);
  j.add("task", set.task());
  j.add("slo_ms", set.slo_ms());
  j.add("workers", set.workers());
  j.add("arrivals", set.policies(0).inputs().arrivals());
  j.add("profiles", set.provenance());
  auto& models = j.add("models", JsonValue::array());
  for (const auto& e : set.models()) {
    auto& m = models.push(JsonValue::object());
    m.add("name", e.name());
    m.add("accuracy", e.accuracy());
    auto& lat = m.add("latency_ms_by_batch", JsonValue::array());
    for (double us : e.latency_us()) lat.push(us / 1000);
  }
  const auto& in0 = set.policies(0).inputs();
  auto& mdp = j.add("mdp", JsonValue::object());
  mdp.add("discretization", name_of(in0.discretization()));
  if (in0.discretization() == schema::FLD) mdp.add("intervals", in0.intervals());
  mdp.add("max_queue", in0.max_queue());
  mdp.add("batching", name_of(in0.batching()));
  mdp.add("horizon", in0.horizon());
  mdp.add("mode", in0.solver_mode());
  auto& policies = j.add("policies", JsonValue::array());
  for (const auto& p : set.policies()) {
    auto& o = policies.push(JsonValue::object());
    o.add("load_qps", p.inputs().load_qps());
    o.add("expected_accuracy", p.expected().accuracy());
    o.add("expected_violation_rate", p.expected().violation_rate());
    o.add("states", p.num_states());
    o.add("expected_share_by_model", model_share_json(set, p));
  }
  return j.text() + "\n";
}

std::string library_json(const std::string& path, const schema::PolicyLibrary& lib) {
  auto j = JsonValue::object();
  j.add("file", path);
  j.add("kind", "policy library");
  j.add("format_version", lib.format_version());
  char checksum[24];
  std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(lib.checksum()));
  j.add("checksum", checksum);
  const auto& first = lib.sets(0);
  j.add("task", first.task());
  j.add("slo_ms", first.slo_ms());
  auto& models = j.add("models", JsonValue::array());
  for (const auto& m : first.models()) models.push(m.name());
  auto& sets = j.add("sets", JsonValue::array());
  for (const auto& set : lib.sets()) {
    auto& o = sets.push(JsonValue::object());
    o.add("workers", set.workers());
    o.add("arrivals", set.policies(0).inputs().arrivals());
    auto& policies = o.add("policies", JsonValue::array());
    for (const auto& p : set.policies()) {
      auto& q = policies.push(JsonValue::object());
      q.add("load_qps", p.inputs().load_qps());
      q.add("expected_accuracy", p.expected().accuracy());
      q.add("expected_violation_rate", p.expected().violation_rate());
    }
  }
  return j.text() + "\n";
}

}  // namespace

int run_policy_show(int argc, char** argv) {
  std::string path, json_path;
  po::options_description desc("lull policy show options");
  // clang-format off
  desc.add_options()("file", po::value(&path)->required(), "policy set, policy library or fleet policy file")
      ("json", po::value(&json_path), "write the summary as JSON to this file ('-' for stdout) instead of text "
       "(a policy set or library)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("file", 1);
  if (!parse_command_line(argc, argv, desc, "usage: lull policy show FILE [--json OUT.json|-]", {&pos, {}, nullptr}))
    return 0;
  if (!json_path.empty()) {
    if (is_fleet_policy_file(path))
      throw UsageError("--json: " + path + " is a fleet policy file; lull compile --fleet --report writes its JSON");
    const auto lib = read_policy_library(path);
    for (const auto& set : lib.sets()) core::policy_table_from_proto(set, {}, path);
    write_output(json_path, lib.sets_size() > 1 ? library_json(path, lib) : set_json(path, lib.sets(0)));
    return 0;
  }
  if (is_fleet_policy_file(path)) {
    const auto fleet = read_fleet_policy(path);
    core::fleet_tables_from_proto(fleet, {}, path);  // the runtime's own checks
    std::fputs(fleet_policy_summary(path, fleet).c_str(), stdout);
    return 0;
  }
  const auto lib = read_policy_library(path);
  // Every set must be one simulate and serve would run (the runtime's loader checks).
  for (const auto& set : lib.sets()) core::policy_table_from_proto(set, {}, path);
  if (lib.sets_size() > 1) {
    show_library(path, lib);
    return 0;
  }
  const auto& set = lib.sets(0);
  std::printf("policy set %s (format %u, checksum %016llx)\n", path.c_str(), set.format_version(),
              static_cast<unsigned long long>(set.checksum()));
  std::printf("task %s, SLO %g ms, %u workers, arrivals %s, %d policies\n", set.task().c_str(), set.slo_ms(),
              set.workers(), set.policies(0).inputs().arrivals().c_str(), set.policies_size());
  if (!set.provenance().empty()) std::printf("profiles: %s\n", set.provenance().c_str());
  std::printf("\n  #  model                          accuracy  lat(b=1) ms  lat(b=8) ms\n");
  for (int m = 0; m < set.models_size(); ++m) {
    const auto& e = set.models(m);
    const double l8 = e.latency_us_size() >= 8 ? e.latency_us(7) / 1000 : NAN;
    std::printf("  %-2d %-30s %8.4f %12.2f %12.2f\n", m, e.name().c_str(), e.accuracy(), e.latency_us(0) / 1000, l8);
  }
  const auto& in0 = set.policies(0).inputs();
  std::printf("\nMDP: %s%s, N = %u, %s batching, horizon %u, mode %s\n", name_of(in0.discretization()),
              in0.discretization() == schema::FLD ? (" D = " + std::to_string(in0.intervals())).c_str() : "",
              in0.max_queue(), name_of(in0.batching()), in0.horizon(), in0.solver_mode().c_str());
  // The models that serve the most queries, by the expected share recorded
  // at compile time; a file from before that was recorded falls back to the
  // share of table rows, which says little (a model may own most rows of
  // states the queue rarely visits) and is labelled as such.
  const bool shares = set.policies(0).expected().model_share_size() == set.models_size();
  std::printf("\n  load QPS  exp. accuracy  exp. violation  states  %s\n",
              shares ? "expected share of queries by model"
                     : "most used models (share of table rows; file predates expected shares)");
  for (const auto& p : set.policies()) {
    std::vector<std::pair<double, int>> top;
    if (shares) {
      for (int m = 0; m < p.expected().model_share_size(); ++m) top.push_back({p.expected().model_share(m), m});
    } else {
      std::map<int, double> uses;
      for (unsigned m : p.action_model()) uses[static_cast<int>(m)] += 1.0 / std::max(1, p.action_model_size());
      for (auto [m, c] : uses) top.push_back({c, m});
    }
    std::sort(top.rbegin(), top.rend());
    std::string use;
    char pct[16];
    for (std::size_t i = 0; i < top.size() && i < 3 && top[i].first >= 0.005; ++i) {
      std::snprintf(pct, sizeof pct, " %.0f%%  ", 100 * top[i].first);
      use += set.models(top[i].second).name() + pct;
    }
    std::printf("  %8g  %13.5f  %14.6f  %6u  %s\n", p.inputs().load_qps(), p.expected().accuracy(),
                p.expected().violation_rate(), p.num_states(), use.c_str());
  }
  return 0;
}

int run_policy_dump(int argc, char** argv) {
  std::string path, json_path;
  double load = -1;
  unsigned workers = 0;
  po::options_description desc("lull policy dump options");
  // clang-format off
  desc.add_options()("file", po::value(&path)->required(), "policy set, policy library or fleet policy file")
      ("workers", ranged_value(&workers, 1u, static_cast<unsigned>(limits::kMaxWorkers)), "from a policy library: the set for this worker count")
      ("json", po::value(&json_path), "write the rows as JSON to this file ('-' for stdout) instead of text on stdout")
      ("load-qps", po::value(&load), "only the policy compiled for this load");
  // clang-format on
  po::positional_options_description pos;
  pos.add("file", 1);
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull policy dump FILE [--workers K] [--json OUT.json|-] [--load-qps L]",
                          {&pos, {}, nullptr}))
    return 0;
  const auto set = read_checked_policy_set(path, workers);
  const bool json = !json_path.empty();
  bool found = false, first = true;
  std::string out;
  char buf[256];
  // Appends printf-formatted text to `out`: one output, written once at the end.
  auto emit = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  if (json) {
    emit("{\"task\":\"%s\",\"slo_ms\":%g,\"workers\":%u,\"models\":[", set.task().c_str(), set.slo_ms(), set.workers());
    for (int m = 0; m < set.models_size(); ++m) emit("%s\"%s\"", m ? "," : "", set.models(m).name().c_str());
    emit("],\"columns\":[\"n\",\"j\",\"slack_ms\",\"model\",\"batch\"],\"policies\":[");
  }
  for (const auto& p : set.policies()) {
    if (load >= 0 && p.inputs().load_qps() != load) continue;
    found = true;
    const int J1 = p.slack_grid_us_size(), N = static_cast<int>(p.inputs().max_queue());
    if (json) {
      emit("%s{\"load_qps\":%g,\"expected_accuracy\":%.17g,\"expected_violation_rate\":%.17g,\"rows\":[",
           first ? "" : ",", p.inputs().load_qps(), p.expected().accuracy(), p.expected().violation_rate());
    } else {
      emit("# load %g QPS: n j model batch\n", p.inputs().load_qps());
    }
    for (int i = 0; i < p.action_model_size(); ++i) {
      const auto [n, j] = row_state(i, J1, N);
      if (json)  // slack_ms: the lower edge T_j of the state's slack interval
        emit("%s[%d,%d,%.6g,%u,%u]", i ? "," : "", n, j, p.slack_grid_us(j) / 1000, p.action_model(i),
             p.action_batch(i));
      else
        emit("%d %d %u %u\n", n, j, p.action_model(i), p.action_batch(i));
    }
    if (json) emit("]}");
    first = false;
  }
  if (json) emit("]}\n");
  if (!found) throw UsageError("--load-qps: " + path + " has no policy for " + std::to_string(load) + " QPS");
  write_output(json ? json_path : "-", out);
  return 0;
}

}  // namespace lull::cli
