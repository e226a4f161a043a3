// lull bench serve: what lull adds to a query's latency, measured side by
// side in one run. One open-loop Poisson stream is dealt in turn to the
// targets: a model server called directly (POST /predictions/MODEL with the
// batch contract's body for one input, the very bytes lull itself would send
// it), lull's front end on TorchServe's route (POST /predictions/TASK with the
// raw input) and, with --v2, on the Open Inference Protocol's (POST
// /v2/models/TASK/infer, the input as one base64 BYTES element). All see the
// same arrival process at the same moments and the same client, so the
// difference in their latency percentiles is lull's overhead per protocol:
// front end, scheduling, encoding and the extra HTTP hop. With --proxy, a
// plain proxy in front of the same model servers (HAProxy, say) is sent the
// direct call's bytes as one more path: the overhead of a standard balancer
// beside lull's. Each path sends over at most --connections kept-alive
// connections (BoundedSender, as lull loadgen): a request due while all are
// busy waits and its latency counts from its due time, so a saturated target
// shows up as latency, never as a slower schedule or a socket per request.
// experiments/serve_overhead.sh and experiments/throughput.sh set up the servers.
#include <boost/program_options.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "cli/bounded_sender.h"
#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "schema/input_limits.h"
#include "cli/open_loop.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "runtime/net/base64.h"
#include "cli/serve_backend.h"
#include "runtime/upstream/torchserve/batch_codec.h"
#include "runtime/upstream/v2/v2_codec.h"
#include "runtime/net/http_client.h"

namespace lull::cli {

namespace {

namespace po = boost::program_options;
using SteadyClock = std::chrono::steady_clock;

struct PathStats {
  const char* name = "";
  std::vector<std::int64_t> latencies_us;  // answered 2xx, after warm-up
  int errors = 0;                          // non-2xx or transport failure, after warm-up
  std::vector<std::int64_t> handler_us;    // X-Lull-Latency-Ms (lull path): arrival to answer inside lull
  std::map<std::string, int> models;       // X-Lull-Model (lull path)
  std::string first_error;
  std::size_t late = 0;  // waited for a free connection (all paths' late requests, not only counted ones)
  double max_wait_ms = 0;
};

}  // namespace

int run_bench_serve(int argc, char** argv) {
  std::string direct, lull_url, v2_url, proxy_url, duration_text, warmup_text, json_out;
  unsigned connections = 256;
  double rate = 0;
  int input_bytes = 4096;
  unsigned seed = 1;
  std::int64_t timeout_ms = 10000;
  ServeBackendFlags backend_flags;
  po::options_description desc("lull bench serve options");
  // clang-format off
  desc.add_options()
      ("direct", po::value(&direct)->required(), "a model server's URL: http://H:P/predictions/MODEL")
      ("lull", po::value(&lull_url), "lull's front end: http://H:P/predictions/TASK")
      ("v2", po::value(&v2_url), "also lull's v2 route: http://H:P/v2/models/TASK/infer")
      ("proxy", po::value(&proxy_url), "also a proxy in front of the model servers (HAProxy), sent the direct call's request: http://H:P/predictions/MODEL")
      ("connections", ranged_value(&connections, 1u, static_cast<unsigned>(limits::kMaxConnections))->default_value(256),
       "at most this many requests in flight per path, each on a kept-alive connection; a request due while all are "
       "busy waits for the next free one, its latency counted from its due time")
      ("rate", po::value(&rate)->required(), "mean arrivals per second, all paths together (an equal share each)")
      ("duration", po::value(&duration_text)->default_value("30s"), "how long to send")
      ("warmup", po::value(&warmup_text)->default_value("2s"), "answers to requests sent this early are not counted")
      ("input-bytes", po::value(&input_bytes)->default_value(4096), "size of the (random) input")
      ("seed", ranged_value(&seed)->default_value(1), "seed of the schedule and the input")
      ("timeout-ms", po::value(&timeout_ms)->default_value(10000), "per-request timeout")
      ("json", po::value(&json_out), "also write the percentiles as JSON here ('-' for stdout)");
  // clang-format on
  add_serve_backend_options(desc, backend_flags);  // --backend v2: --direct is http://H:P/v2/models/MODEL/infer
  if (!parse_command_line(argc, argv, desc,
                          "usage: lull bench serve --direct http://127.0.0.1:8080/predictions/MODEL "
                          "--lull http://127.0.0.1:8070/predictions/TASK --rate 40 --duration 30s"))
    return 0;
  check_positive_range("--rate", rate, limits::kMaxLoadQps);
  check_range("--input-bytes", input_bytes, 1, limits::kMaxInputBytes);
  check_range("--timeout-ms", static_cast<double>(timeout_ms), 1, limits::kMaxIntervalMs);
  if (lull_url.empty() && v2_url.empty() && proxy_url.empty())
    throw UsageError("give at least one of --lull, --v2 and --proxy to compare with --direct");
  for (const std::string* url : {&direct, &lull_url, &v2_url, &proxy_url})
    if (!url->empty() && url->rfind("http://", 0) != 0)
      throw UsageError("--direct, --lull, --v2 and --proxy must be http:// URLs");
  const double duration_s = parse_duration_s(duration_text);
  const double warmup_s = parse_duration_s(warmup_text, "--warmup");
  if (warmup_s >= duration_s) throw UsageError("--warmup must be shorter than --duration");

  std::mt19937 rng(seed);
  std::string input(static_cast<size_t>(input_bytes), '\0');
  for (auto& c : input) c = static_cast<char>(rng());
  // The same input each way: raw to lull, wrapped in the backend's batch
  // request to the model server, exactly as lull forwards a batch of one, and
  // as a v2 infer request to lull's v2 front end (--v2).
  const ServeBackend protocol(backend_flags);
  const std::string direct_body = protocol.v2() ? v2::encode_v2_bytes_request({&input}, protocol.input_name())
                                                : torchserve::encode_batch_request({&input});
  const std::string v2_body = R"({"inputs":[{"name":"input","shape":[1],"datatype":"BYTES",)"
                              R"("parameters":{"content_type":"base64"},"data":[")" +
                              net::base64_encode(input) + "\"]}]}";
  const std::vector<double> at_s = arrival_schedule(rate, duration_s, ArrivalProcess::poisson(), seed);

  // The paths given, in this order; the stream is dealt to them in turn.
  struct Path {
    const char* name;
    const std::string* url;
    const std::string* body;
    const char* type;
  };
  const char* direct_type = protocol.v2() ? v2::kV2ContentType : torchserve::kBatchContentType;
  std::vector<Path> given = {{"direct", &direct, &direct_body, direct_type}};
  if (!lull_url.empty()) given.push_back({"lull", &lull_url, &input, "application/octet-stream"});
  if (!v2_url.empty()) given.push_back({"lull-v2", &v2_url, &v2_body, "application/json"});
  if (!proxy_url.empty()) given.push_back({"proxy", &proxy_url, &direct_body, direct_type});
  const int n = static_cast<int>(given.size());
  std::vector<PathStats> paths(given.size());
  for (int k = 0; k < n; ++k) paths[k].name = given[k].name;
  std::mutex mu;
  // One client (loop thread) and sender per path, so a path that saturates
  // holds no other's connections. Destroyed before what their callbacks touch.
  net::HttpClient::Options client_options;
  client_options.max_total_connections = static_cast<long>(connections);
  std::vector<std::unique_ptr<net::HttpClient>> clients;
  std::vector<std::unique_ptr<BoundedSender>> senders;
  for (int k = 0; k < n; ++k) {
    clients.push_back(std::make_unique<net::HttpClient>(client_options));
    senders.push_back(std::make_unique<BoundedSender>(*clients.back(), connections));
  }
  const auto t0 = SteadyClock::now();
  for (size_t i = 0; i < at_s.size(); ++i) {
    std::this_thread::sleep_until(
        t0 + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(at_s[i])));
    const int path = static_cast<int>(i % static_cast<size_t>(n));
    const bool counted = at_s[i] >= warmup_s;
    net::HttpRequest req;
    req.method = "POST";
    req.url = *given[path].url;
    req.body = *given[path].body;
    req.content_type = given[path].type;
    req.timeout_ms = timeout_ms;
    senders[path]->send(std::move(req), [&, path, counted](net::HttpResponse r, std::int64_t waited_us) {
      std::lock_guard<std::mutex> lock(mu);
      PathStats& p = paths[path];
      if (counted) {
        if (r.ok()) {
          p.latencies_us.push_back(r.elapsed_us + waited_us);
          const std::string model = r.header("x-lull-model");
          if (!model.empty()) p.models[model]++;
          const std::string inside = r.header("x-lull-latency-ms");
          if (!inside.empty()) p.handler_us.push_back(static_cast<std::int64_t>(std::stod(inside) * 1000));
        } else {
          if (p.errors++ == 0) p.first_error = r.describe();
        }
      }
    });
  }
  // Every request completes within --timeout-ms of its send; what still
  // waits for a connection after the drain is never sent (unanswered).
  size_t outstanding = 0;
  for (auto& sender : senders) {
    sender->wait_all(timeout_ms + 1000, static_cast<std::int64_t>(std::max(30.0, duration_s) * 1000));
    const size_t not_sent = sender->drop_waiting();
    outstanding += sender->wait_all(timeout_ms + 1000, timeout_ms + 1000) + not_sent;
  }
  for (int k = 0; k < n; ++k) {
    const BoundedSender::Counts c = senders[k]->counts();
    paths[k].late = c.late;
    paths[k].max_wait_ms = c.max_wait_us / 1000.0;
  }
  std::lock_guard<std::mutex> lock(mu);
  const double qs[] = {50, 90, 99, 99.9, 100};
  std::vector<std::array<double, 5>> pct(given.size());
  // The text table goes to stderr when the JSON takes stdout.
  FILE* text_out = is_stdout(json_out) ? stderr : stdout;
  std::fprintf(text_out,
               "lull bench serve: %zu requests over %.1f s (%.1f/s in all, 1/%d each way), %d-byte input, "
               "the first %.1f s not counted\n",
               at_s.size(), duration_s, at_s.size() / duration_s, n, input_bytes, warmup_s);
  std::fprintf(text_out, "%-7s %7s %7s %8s %8s %8s %9s %8s\n", "path", "ok", "errors", "p50 ms", "p90 ms", "p99 ms",
               "p99.9 ms", "max ms");
  for (int k = 0; k < n; ++k) {
    for (int q = 0; q < 5; ++q) pct[k][q] = percentile_ms(paths[k].latencies_us, qs[q]);
    std::fprintf(text_out, "%-7s %7zu %7d %8.2f %8.2f %8.2f %9.2f %8.2f\n", paths[k].name, paths[k].latencies_us.size(),
                 paths[k].errors, pct[k][0], pct[k][1], pct[k][2], pct[k][3], pct[k][4]);
  }
  for (int k = 1; k < n; ++k) {
    std::fprintf(text_out, "%s - direct: p50 %+.2f ms, p90 %+.2f ms, p99 %+.2f ms, p99.9 %+.2f ms\n", paths[k].name,
                 pct[k][0] - pct[0][0], pct[k][1] - pct[0][1], pct[k][2] - pct[0][2], pct[k][3] - pct[0][3]);
    if (!paths[k].handler_us.empty())
      std::fprintf(text_out,
                   "  inside lull's handler (X-Lull-Latency-Ms): p50 %.2f, p90 %.2f, p99 %.2f, p99.9 %.2f ms\n",
                   percentile_ms(paths[k].handler_us, 50), percentile_ms(paths[k].handler_us, 90),
                   percentile_ms(paths[k].handler_us, 99), percentile_ms(paths[k].handler_us, 99.9));
    for (const auto& [m, count] : paths[k].models)
      std::fprintf(text_out, "  %s answered with %s: %d\n", paths[k].name, m.c_str(), count);
  }
  for (int k = 0; k < n; ++k)
    if (paths[k].late)
      std::fprintf(text_out, "  %s: %zu requests waited for one of %u connections (up to %.1f ms)\n", paths[k].name,
                   paths[k].late, connections, paths[k].max_wait_ms);
  for (int k = 0; k < n; ++k)
    if (paths[k].errors)
      std::fprintf(text_out, "  %s: %d errors, first: %s\n", paths[k].name, paths[k].errors,
                   paths[k].first_error.c_str());
  if (outstanding) std::fprintf(text_out, "  %zu requests unanswered\n", outstanding);
  if (!json_out.empty()) {
    char buf[512];
    std::string j = "{";
    for (int k = 0; k < n; ++k) {
      std::snprintf(buf, sizeof buf,
                    "%s\"%s\":{\"ok\":%zu,\"errors\":%d,\"p50_ms\":%.4f,\"p90_ms\":%.4f,\"p99_ms\":%.4f,"
                    "\"p999_ms\":%.4f,\"max_ms\":%.4f,\"late\":%zu}",
                    k ? "," : "", paths[k].name, paths[k].latencies_us.size(), paths[k].errors, pct[k][0], pct[k][1],
                    pct[k][2], pct[k][3], pct[k][4], paths[k].late);
      j += buf;
    }
    std::snprintf(buf, sizeof buf, ",\"rate\":%.4f,\"duration_s\":%.3f,\"input_bytes\":%d}\n", rate, duration_s,
                  input_bytes);
    j += buf;
    write_output(json_out, j);
  }
  bool errors = outstanding != 0;
  for (const auto& p : paths) errors = errors || p.errors;
  return errors ? 1 : 0;
}

}  // namespace lull::cli
