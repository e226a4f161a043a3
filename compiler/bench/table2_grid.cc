#include "compiler/bench/table2_grid.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "compiler/profile/profile_interpolation.h"
#include "compiler/solver/solver_registry.h"

#ifdef LULL_HAVE_CUDA
#include "compiler/solver/cuda/cuda_solver.h"
#endif

namespace lull::compiler {
namespace {

// Writing "5" to clear_refs resets the peak resident set (VmHWM) to the
// current one (Linux >= 4.0), so each cell reports its own peak.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

struct Scheme {
  std::string name;
  Discretization discretization;
  int intervals;
};

std::string batching_name(Batching b) { return b == Batching::kMaximal ? "maximal" : "variable"; }

// One untimed solve, so that the first cell does not pay for creating the
// CUDA context or starting OpenMP's threads.
void warm_up(Solver& solver, const ReducedProfiles& models, const Table2Options& o) {
  MdpOptions m = o.mdp;
  m.max_queue = 4;
  m.intervals = 10;
  solver.solve(build_mdp_problem(models, m), SolveOptions{});
}

}  // namespace

std::vector<Table2Cell> run_table2_grid(const ReducedProfiles& given, const Table2Options& o, std::ostream* log) {
  std::vector<ReducedProfiles> sets;
  if (o.include_given) sets.push_back(given);
  if (o.include_interpolated) {
    ReducedProfiles synthetic = given;
    synthetic.models = interpolate_pareto_front(given.models, o.interpolation_step);
    synthetic.synthetic = true;
    sets.push_back(std::move(synthetic));
  }
  std::vector<Scheme> schemes;
  for (int d : o.fld_intervals) schemes.push_back({"FLD D=" + std::to_string(d), Discretization::kFld, d});
  if (o.include_md) schemes.push_back({"MD", Discretization::kMd, 0});

  // One solver per device, or the reason there is none.
  std::vector<std::unique_ptr<Solver>> solvers;
  std::vector<std::string> unusable(o.devices.size());
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    try {
      solvers.push_back(make_solver(o.devices[i], log));
      warm_up(*solvers.back(), given, o);
    } catch (const std::exception& e) {
      if (solvers.size() > i) solvers.pop_back();
      solvers.push_back(nullptr);
      unusable[i] = e.what();
      if (log) *log << "table2: device " << o.devices[i] << " skipped: " << e.what() << "\n";
    }
  }

  std::vector<Table2Cell> cells;
  for (const auto& set : sets)
    for (const auto& scheme : schemes)
      for (Batching batching : o.batchings) {
        MdpOptions m = o.mdp;
        m.discretization = scheme.discretization;
        m.intervals = scheme.discretization == Discretization::kFld ? scheme.intervals : 100;
        m.batching = batching;
        for (std::size_t i = 0; i < o.devices.size(); ++i) {
          Table2Cell c;
          c.models = static_cast<int>(set.models.size());
          c.scheme = scheme.name;
          c.batching = batching_name(batching);
          c.device = solvers[i] ? solvers[i]->name() : o.devices[i];
          if (!solvers[i]) {
            c.error = unusable[i];
            cells.push_back(c);
            continue;
          }
          try {
            c.seconds = 1e300;
            for (int r = 0; r < std::max(1, o.repeat); ++r) {
              const bool reset = reset_peak_rss();
              const auto t0 = std::chrono::steady_clock::now();
              const MdpProblem problem = build_mdp_problem(set, m);
              const SolverOutput out = solvers[i]->solve(problem, o.solve);
              const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              if (s < c.seconds) {
                c.seconds = s;
                c.phases = out.seconds;
                c.states = problem.num_states();
                c.actions = problem.actions.size();
                c.expected_accuracy = out.expected_accuracy;
                c.expected_violation_rate = out.expected_violation_rate;
                c.device_peak_mb = out.device_bytes / (1024.0 * 1024.0);
                c.host_peak_mb = reset ? peak_rss_mb() : -1;
              }
            }
          } catch (const std::exception& e) {
            c.error = e.what();
          }
          if (log) {
            char line[256];
            if (c.error.empty())
              std::snprintf(line, sizeof line,
                            "table2: %2d models  %-9s  %-8s  %-5s  %9.3f s  host %7.1f MB  device %7.1f MB\n", c.models,
                            c.scheme.c_str(), c.batching.c_str(), c.device.c_str(), c.seconds, c.host_peak_mb,
                            c.device_peak_mb);
            else
              std::snprintf(line, sizeof line, "table2: %2d models  %-9s  %-8s  %-5s  failed: %.150s\n", c.models,
                            c.scheme.c_str(), c.batching.c_str(), c.device.c_str(), c.error.c_str());
            *log << line << std::flush;
          }
          cells.push_back(std::move(c));
        }
      }
  return cells;
}

std::string table2_device_description(const std::string& device) {
  if (device == "cuda") {
#ifdef LULL_HAVE_CUDA
    return cuda_solver_device_description();
#else
    return "no CUDA backend in this build";
#endif
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  int cores = 0;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      model = line.substr(line.find(':') + 2);
    if (line.rfind("processor", 0) == 0) ++cores;
  }
  return model + ", " + std::to_string(cores) + " logical cores";
}

std::string table2_markdown(const std::vector<Table2Cell>& cells, const std::vector<std::string>& devices) {
  // Rows keyed by (models, scheme, batching) in first-seen order; columns per device.
  using Key = std::tuple<int, std::string, std::string>;
  std::vector<Key> order;
  std::map<Key, std::map<std::string, const Table2Cell*>> by_key;
  std::vector<std::string> names;
  for (const auto& c : cells) {
    const Key k{c.models, c.scheme, c.batching};
    if (!by_key.count(k)) order.push_back(k);
    by_key[k][c.device] = &c;
    bool seen = false;
    for (const auto& n : names) seen |= n == c.device;
    if (!seen) names.push_back(c.device);
  }
  if (names.empty()) names = devices;
  std::ostringstream out;
  out << "| models | slack grid | batching | states | actions |";
  for (const auto& n : names) out << " " << n << " s | " << n << " peak MB |";
  out << " expected accuracy | expected violations |\n|---:|---|---|---:|---:|";
  for (std::size_t i = 0; i < names.size(); ++i) out << "---:|---:|";
  out << "---:|---:|\n";
  char buf[64];
  for (const auto& k : order) {
    const auto& row = by_key[k];
    const Table2Cell* any = nullptr;
    for (const auto& n : names)
      if (row.count(n) && row.at(n)->error.empty()) {
        any = row.at(n);
        break;
      }
    out << "| " << std::get<0>(k) << " | " << std::get<1>(k) << " | " << std::get<2>(k) << " | "
        << (any ? std::to_string(any->states) : "") << " | " << (any ? std::to_string(any->actions) : "") << " |";
    for (const auto& n : names) {
      const auto it = row.find(n);
      if (it == row.end() || !it->second->error.empty()) {
        out << " n/a | n/a |";
        continue;
      }
      const Table2Cell& c = *it->second;
      const double mb = c.device_peak_mb > 0 ? c.device_peak_mb : c.host_peak_mb;
      std::snprintf(buf, sizeof buf, " %.3f | %.0f%s |", c.seconds, mb, c.device_peak_mb > 0 ? " (device)" : "");
      out << buf;
    }
    if (any) {
      std::snprintf(buf, sizeof buf, " %.6f | %.6f |", any->expected_accuracy, any->expected_violation_rate);
      out << buf << "\n";
    } else {
      out << " | |\n";
    }
  }
  return out.str();
}

}  // namespace lull::compiler
