#include "cli/process_clock.h"

#include <algorithm>
#include <chrono>

namespace lull::cli {
namespace {

// Set during static initialization, before main runs; mark_process_start
// keeps the earlier of that and its own call.
std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();

}  // namespace

void mark_process_start() { g_start = std::min(g_start, std::chrono::steady_clock::now()); }

double seconds_since_process_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

}  // namespace lull::cli
