// lull check: before serving, whether a policy set's latencies hold on this
// machine. For each model server, each model of the set and a few batch sizes
// (1, the largest within the SLO, one between), a few batches are timed alone
// (as `lull profile` does) and their percentile, the one the set was compiled
// at, is set against the set's latency: the ratio per (model, batch), and a
// verdict. Exit 0 when every ratio is within --tolerance, 1 when not (with the
// commands to re-profile and recompile), 2 on an error.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/batch_timer.h"
#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "cli/parse_options.h"
#include "cli/serve_backend.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"
#include "schema/input_limits.h"
#include "schema/policy_file.h"

namespace lull::cli {

namespace po = boost::program_options;

namespace {

// Nearest-rank percentile of `v` (p in (0, 100]).
double percentile_of(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// 1, the largest batch whose compiled latency is within the SLO, and one between.
std::vector<int> default_batches(const schema::ModelEntry& m, double slo_us) {
  int largest = 1;
  for (int b = 1; b <= m.latency_us_size(); ++b)
    if (m.latency_us(b - 1) <= slo_us) largest = b;
  std::set<int> b{1, (largest + 1) / 2, largest};
  return {b.begin(), b.end()};
}

}  // namespace

int run_check(int argc, char** argv) {
  std::string policies, servers_text, batches_text, inputs_dir, token_file;
  int samples = 10, warmup = 2, input_bytes = 4096;
  double tolerance = 1.1;
  std::int64_t timeout_ms = 60000;
  ServeBackendFlags backend_flags;
  po::options_description desc("lull check: whether a policy set's latencies hold against these model servers");
  // clang-format off
  desc.add_options()
      ("policies", po::value(&policies)->required(), "policy set or library (as lull serve takes it)")
      ("servers", po::value(&servers_text)->required(), "model server base URLs, each checked: URL,URL,...")
      ("batches", po::value(&batches_text), "batch sizes to time (default: 1, the largest within the SLO, one between)")
      ("samples", po::value(&samples)->default_value(samples), "timed batches per (server, model, batch)")
      ("warmup", po::value(&warmup)->default_value(warmup), "untimed batches before each (server, model, batch)")
      ("tolerance", po::value(&tolerance)->default_value(tolerance),
       "largest measured/compiled ratio that still holds")
      ("inputs", po::value(&inputs_dir), "directory of real query inputs (e.g. profiles/inputs), for real models")
      ("input-bytes", po::value(&input_bytes)->default_value(input_bytes), "size of each random input (without --inputs)")
      ("torchserve-token-file", po::value(&token_file), "TorchServe's key_file.json (its inference key is sent)")
      ("timeout-ms", po::value(&timeout_ms)->default_value(timeout_ms), "per-request timeout");
  // clang-format on
  add_serve_backend_options(desc, backend_flags);
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull check --policies SET.pb --servers URL,URL [--inputs profiles/inputs]\n"
                          "       (exit 0: the set's latencies hold here; 1: they do not, and what to run; 2: error)"))
    return 0;
  check_range("--samples", samples, 1, limits::kMaxSamples);
  check_range("--warmup", warmup, 0, limits::kMaxSamples);
  check_range("--input-bytes", input_bytes, 1, limits::kMaxInputBytes);
  check_range("--timeout-ms", static_cast<double>(timeout_ms), 1, limits::kMaxIntervalMs);
  if (!(tolerance >= 1 && tolerance <= 100)) throw UsageError("--tolerance: expected a ratio in 1..100");
  const auto lib = read_policy_library(policies);
  const auto& set = lib.sets(0);
  const double p = set.policies(0).inputs().percentile();
  std::vector<std::string> servers;
  for (const auto& s : torchserve::split_list(servers_text)) {
    try {
      servers.push_back(torchserve::normalize_base_url(s));
    } catch (const std::invalid_argument& e) {
      throw UsageError("--servers " + std::string(e.what()));
    }
  }
  if (servers.empty()) throw UsageError("--servers: no URL");
  std::vector<int> batches;
  for (const auto& item : torchserve::split_list(batches_text)) {
    int b = 0;
    try {
      b = std::stoi(item);
    } catch (const std::exception&) {
    }
    if (b < 1 || b > static_cast<int>(limits::kMaxBatch))
      throw UsageError("--batches: '" + item + "' is not a batch size");
    batches.push_back(b);
  }
  torchserve::TorchServeKeys keys;
  if (!token_file.empty()) {
    try {
      keys = torchserve::read_torchserve_key_file(token_file);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const ServeBackend protocol(backend_flags);
  const torchserve::BatchWire& wire = protocol.wire() ? *protocol.wire() : torchserve::torchserve_wire();
  const auto inputs = batch_inputs(inputs_dir, input_bytes);

  std::printf("  %-28s %-24s %5s  %11s  %11s  %5s\n", "server", "model", "batch", "compiled ms", "measured ms",
              "ratio");
  int rows = 0, over = 0;
  double worst = 0;
  std::string worst_row;
  for (const auto& url : servers) {
    BatchTimer timer(url, wire, inputs, timeout_ms, keys.inference);
    for (const auto& m : set.models()) {
      const auto sizes = batches.empty() ? default_batches(m, set.slo_ms() * 1000) : batches;
      for (int b : sizes) {
        if (b > m.latency_us_size())
          throw UsageError("--batches " + std::to_string(b) + ": " + policies + " has latencies up to batch " +
                           std::to_string(m.latency_us_size()));
        for (int i = 0; i < warmup; ++i) timer.seconds(m.name(), b);
        std::vector<double> got;
        for (int s = 0; s < samples; ++s) got.push_back(timer.seconds(m.name(), b) * 1000);
        const double compiled = m.latency_us(b - 1) / 1000, measured = percentile_of(got, p);
        const double ratio = measured / compiled;
        std::printf("  %-28s %-24s %5d  %11.2f  %11.2f  %5.2f%s\n", url.c_str(), m.name().c_str(), b, compiled,
                    measured, ratio, ratio > tolerance ? "  slower" : "");
        std::fflush(stdout);
        ++rows;
        over += ratio > tolerance ? 1 : 0;
        if (ratio > worst) {
          worst = ratio;
          char text[160];
          std::snprintf(text, sizeof text, "%s batch %d on %s", m.name().c_str(), b, url.c_str());
          worst_row = text;
        }
      }
    }
  }
  char line[512];
  if (over == 0) {
    std::snprintf(line, sizeof line,
                  "lull check: %s's latencies hold here: %d of %d (model, batch) within %.2fx of the compiled p%g "
                  "(worst %.2fx: %s)\n",
                  policies.c_str(), rows, rows, tolerance, p, worst, worst_row.c_str());
    std::fputs(line, stderr);
    return 0;
  }
  std::string models;
  for (const auto& m : set.models()) models += (models.empty() ? "" : ",") + m.name();
  std::snprintf(line, sizeof line,
                "lull check: %s's latencies do not hold here: %d of %d (model, batch) slower than %.2fx the compiled "
                "p%g (worst %.2fx: %s); the policies would violate the SLO far more than they expect\n",
                policies.c_str(), over, rows, tolerance, p, worst, worst_row.c_str());
  std::fputs(line, stderr);
  std::fprintf(stderr,
               "lull check: re-profile on this machine and recompile (docs/user-guide.md, \"lull check\"): lull "
               "profile --worker %s --models %s%s --accuracy ACCURACY.json --out PROFILE.json, then lull compile "
               "--profiles PROFILE.json with this set's SLO, workers and loads\n",
               servers.front().c_str(), models.c_str(), inputs_dir.empty() ? "" : (" --inputs " + inputs_dir).c_str());
  return 1;
}

}  // namespace lull::cli
