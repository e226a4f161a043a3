// What lull's log costs on the serving path (docs/benchmarks.md, "Logging"):
// a debug line at --log-level info (filtered: the per-batch line), and an
// access log line per response into a file (what --access-log adds).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "runtime/log/log.h"
#include "runtime/log/log_settings.h"

namespace {

void BM_debug_line_filtered_at_info(benchmark::State& state) {
  lull::log::configure({});
  for (auto _ : state)
    lull::log::debug("batch done: worker %d, %s, %zu queries, %s", 0, "mobilenet_v2", std::size_t{3}, "ok");
}
BENCHMARK(BM_debug_line_filtered_at_info);

void BM_access_line_to_file(benchmark::State& state) {
  const std::string path = "/tmp/lull-log-bench-access.log";
  std::remove(path.c_str());
  lull::log::Settings s;
  s.format = state.range(0) ? lull::log::Format::kJson : lull::log::Format::kPlain;
  s.access_log = path;
  lull::log::configure(s);
  lull::log::AccessRecord r{"127.0.0.1", "POST", "/predictions/image-classification", 200, 25, 40.912};
  for (auto _ : state) lull::log::access(r);
  lull::log::configure({});  // closes the file
  std::remove(path.c_str());
}
BENCHMARK(BM_access_line_to_file)->Arg(0)->Arg(1)->ArgName("json");

}  // namespace
