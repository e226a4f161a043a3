#include "runtime/session/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "runtime/net/prometheus_text.h"

namespace lull::session {

namespace {

// /proc/self/stat's fields after the command name: entry 0 is field 3 (state).
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');  // the command name may hold spaces and ')'
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(line.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double boot_time_s() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

}  // namespace

std::string render_process_metrics() {
  std::string out;
  const auto f = stat_fields();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  if (f.size() > 21 && ticks > 0) {
    // Fields 14 utime, 15 stime, 22 starttime (ticks since boot), 23 vsize, 24 rss (pages).
    net::prom::family(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
    net::prom::sample(out, "process_cpu_seconds_total", (std::stod(f[11]) + std::stod(f[12])) / ticks);
    net::prom::family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    net::prom::sample(out, "process_virtual_memory_bytes", std::stod(f[20]));
    net::prom::family(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    net::prom::sample(out, "process_resident_memory_bytes", std::stod(f[21]) * page);
    const double boot = boot_time_s();
    if (boot >= 0) {
      net::prom::family(out, "process_start_time_seconds", "gauge",
                        "Start time of the process since unix epoch in seconds.");
      net::prom::sample(out, "process_start_time_seconds", boot + std::stod(f[19]) / ticks);
    }
  }
  std::error_code ec;
  double fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) fds++;
  if (!ec) {
    net::prom::family(out, "process_open_fds", "gauge", "Number of open file descriptors.");
    net::prom::sample(out, "process_open_fds", fds);
  }
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    net::prom::family(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
    net::prom::sample(out, "process_max_fds", static_cast<double>(lim.rlim_cur));
  }
  return out;
}

}  // namespace lull::session
