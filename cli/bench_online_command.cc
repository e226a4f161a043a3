// lull bench online: the latency of one online compilation as the runtime
// waits for it, in a warm process (profiles read once, as in lull serve and
// simulate): request -> compiler -> checked runtime table, ready to swap in.
// Each (workers, load) is compiled once (no cache hits); wall and CPU time
// per compilation, then the best and the median. Numbers go to
// docs/benchmarks.md (target: at most 0.3 s for a 9-model policy).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/number_lists.h"
#include "cli/online_compile.h"
#include "cli/parse_options.h"

namespace po = boost::program_options;

namespace lull::cli {
namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int run_bench_online(int argc, char** argv) {
  std::string policies, profiles, workers_text = "65,70,75", loads_text = "2600,3000,3400";
  OnlineCompileFlags flags;
  po::options_description desc("lull bench online options");
  // clang-format off
  desc.add_options()
      ("policies", po::value(&policies)->required(), "the policy library whose recorded settings the policies follow")
      ("profiles", po::value(&profiles)->required(), "the profiles it was compiled from")
      ("workers", po::value(&workers_text)->default_value(workers_text), "worker counts to compile for")
      ("load-qps", po::value(&loads_text)->default_value(loads_text), "loads to compile for (each pair once)");
  // clang-format on
  add_online_compile_options(desc, flags);
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull bench online --policies SET.pb --profiles P [--accuracy-percent A] "
                          "[--workers 65,70 --load-qps 3000,3400]"))
    return 0;
  const auto workers = parse_number_list(workers_text, "--workers");
  const auto loads = parse_number_list(loads_text, "--load-qps");
  const auto t0 = std::chrono::steady_clock::now();
  CompilerPolicySource source(policies, profiles, flags);
  std::printf("lull bench online: profiles read and reduced once in %.3f s (not per compilation)\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::printf("workers  load_qps  wall_s  cpu_s\n");
  std::vector<double> walls, cpus;
  for (double k : workers)
    for (double l : loads) {
      const double c0 = cpu_seconds();
      const auto w0 = std::chrono::steady_clock::now();
      const core::PolicyTable t =
          source.compile(core::PolicyRequest{static_cast<int>(k), l, source.compiler().recorded_arrivals()});
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      const double cpu = cpu_seconds() - c0;
      walls.push_back(wall);
      cpus.push_back(cpu);
      std::printf("%7d  %8g  %6.3f  %5.3f  (%zu models)\n", t.workers, t.policies.front().load_qps, wall, cpu,
                  t.models.size());
    }
  std::printf("best %.3f s wall (median %.3f), CPU best %.3f s (median %.3f), %zu compilations\n",
              *std::min_element(walls.begin(), walls.end()), median(walls), *std::min_element(cpus.begin(), cpus.end()),
              median(cpus), walls.size());
  return 0;
}

}  // namespace lull::cli
