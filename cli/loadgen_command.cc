// lull loadgen: an open-loop load generator. Arrivals follow a schedule
// fixed in advance (the simulator's sampler, at a constant rate or a rate
// file's), and each request is sent at its time whether or not earlier ones
// have returned, so a slow server sees the load pile up instead of the
// generator slowing down with it.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "cli/accuracy_table.h"
#include "cli/bounded_sender.h"
#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "schema/input_limits.h"
#include "cli/parse_options.h"
#include "cli/open_loop.h"
#include "cli/output_file.h"
#include "runtime/net/http_client.h"
#include "schema/bounded_file.h"
#include "schema/modulated_rates.h"
#include "schema/rate_file.h"

namespace lull::cli {

namespace {

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

struct Record {
  std::int64_t latency_us = 0;
  int status = 0;
  std::string error;  // transport failure
  std::string model;  // X-Lull-Model, when the target is lull
};

// Whether argv names --rate / --duration (boost fills defaults silently).
bool names_flag(int argc, char** argv, const std::string& flag) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
  }
  return false;
}
bool rate_given(int argc, char** argv) { return names_flag(argc, argv, "--rate"); }
bool duration_given(int argc, char** argv) { return names_flag(argc, argv, "--duration"); }

// --rate-file's segments from 0, cut at cut_s when > 0; one-line errors.
std::vector<RateSegment> loadgen_rate_file(const std::string& path, double cut_s) {
  std::vector<RateSegment> segs;
  try {
    segs = read_rate_file(path);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--rate-file ") + e.what());
  }
  if (segs.empty()) throw UsageError("--rate-file " + path + ": no rates");
  const double t0 = segs.front().start_s;
  std::vector<RateSegment> out;
  for (auto s : segs) {
    if (!(s.qps <= limits::kMaxLoadQps))
      throw UsageError("--rate-file " + path + ": a rate above " + std::to_string(limits::kMaxLoadQps) + " QPS");
    s.start_s -= t0;
    s.end_s -= t0;
    if (cut_s > 0 && s.start_s >= cut_s) break;
    if (cut_s > 0) s.end_s = std::min(s.end_s, cut_s);
    out.push_back(s);
  }
  const double span = out.back().end_s;
  if (!(span > 0) || span > limits::kMaxTraceSeconds)
    throw UsageError("--rate-file " + path + ": its length must be positive and at most " +
                     std::to_string(static_cast<long>(limits::kMaxTraceSeconds)) + " s");
  double area = 0;
  for (const auto& s : out) area += s.qps * (s.end_s - s.start_s);
  if (!(area > 0)) throw UsageError("--rate-file " + path + ": every rate is 0");
  if (area > limits::kMaxTraceQueries)
    throw UsageError("--rate-file " + path + ": more than " +
                     std::to_string(static_cast<long>(limits::kMaxTraceQueries)) + " arrivals");
  return out;
}

}  // namespace

int run_loadgen(int argc, char** argv) {
  std::string target, duration_text, arrivals, modulation, json_out, accuracy_path, body_file, rate_file;
  double rate = 0, slo_ms = 0;
  const double drain_s = 30;
  int input_bytes = 4096;
  unsigned seed = 1;
  unsigned connections = 256;
  std::int64_t timeout_ms = 30000;
  std::vector<std::string> header_texts;
  po::options_description desc("lull loadgen: open-loop HTTP load against lull or a model server");
  // clang-format off
  desc.add_options()
      ("target", po::value(&target)->required(), "full URL to POST to, e.g. http://127.0.0.1:8070/predictions/TASK")
      ("rate", po::value(&rate), "mean arrivals per second")
      ("rate-file", po::value(&rate_file),
       "instead of --rate: a rate that moves, lines '<second> <QPS>' (simulate's rate-file:), --arrivals within "
       "each rate; it lasts the file's length, or --duration if given (cut there)")
      ("duration", po::value(&duration_text)->default_value("30s"), "how long to send: 30s, 500ms, 2m")
      ("arrivals", po::value(&arrivals)->default_value("poisson"), "poisson | uniform | gamma:CV2 | batch:D (schema/arrival_process.h)")
      ("modulation", po::value(&modulation),
       "mmpp:RATIO:STATE_S | sinusoid:AMPLITUDE:PERIOD_S: the rate moves around --rate (schema/modulated_rates.h), "
       "--arrivals within it")
      ("seed", ranged_value(&seed)->default_value(1), "seed of the arrival schedule")
      ("input-bytes", po::value(&input_bytes)->default_value(4096), "size of the synthetic input")
      ("body-file", po::value(&body_file), "send this file's bytes instead")
      ("timeout-ms", po::value(&timeout_ms)->default_value(30000), "per-request timeout")
      ("header", po::value(&header_texts)->composing(),
       "NAME:VALUE sent on every request (repeatable), e.g. X-Lull-Class:bulk for a fleet's class (docs/operators-guide.md)")
      ("connections", ranged_value(&connections, 1u, static_cast<unsigned>(limits::kMaxConnections))->default_value(256),
       "at most this many requests in flight, each on a kept-alive connection reused by later ones; a request due "
       "while all are busy waits for the next free one and is reported late, its latency counted from its due time")
      ("slo-ms", po::value(&slo_ms), "also report the share of answers later than this")
      ("accuracy", po::value(&accuracy_path), "JSON {model: accuracy}: report accuracy per satisfied query (needs --slo-ms)")
      ("json", po::value(&json_out), "also write the summary as JSON here ('-' for stdout, the text summary then goes to stderr)");
  // clang-format on
  const char* usage =
      "usage: lull loadgen --target URL (--rate QPS --duration 30s | --rate-file PATH) "
      "[--arrivals poisson|uniform|gamma:CV2|batch:D]";
  if (!parse_command_line(argc, argv, desc, usage)) return 0;
  if (rate_file.empty() != rate_given(argc, argv)) throw UsageError("give one of --rate QPS and --rate-file PATH");
  if (rate_file.empty()) check_positive_range("--rate", rate, limits::kMaxLoadQps);
  check_range("--input-bytes", input_bytes, 1, limits::kMaxInputBytes);
  check_range("--timeout-ms", static_cast<double>(timeout_ms), 1, limits::kMaxIntervalMs);
  if (slo_ms != 0) check_positive_range("--slo-ms", slo_ms, limits::kMaxSloMs);
  const ArrivalProcess process = parse_arrival_process(arrivals, "--arrivals", true);
  if (target.rfind("http://", 0) != 0) throw UsageError("--target " + target + ": expected an http:// URL");
  if (!accuracy_path.empty() && !(slo_ms > 0)) throw UsageError("--accuracy needs --slo-ms");
  double duration_s = parse_duration_s(duration_text);
  std::vector<RateSegment> segments{{0, duration_s, rate}};
  if (!rate_file.empty()) {
    segments = loadgen_rate_file(rate_file, duration_given(argc, argv) ? duration_s : 0);
    duration_s = segments.back().end_s;
    double area = 0;
    for (const auto& seg : segments) area += seg.qps * (seg.end_s - seg.start_s);
    rate = area / duration_s;  // reported as the rate asked
  }
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& h : header_texts) {
    const std::size_t colon = h.find(':');
    const std::string name = h.substr(0, colon);
    const bool token = !name.empty() && name.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789!#$%&'*+-.^_`|~") == std::string::npos;
    if (colon == std::string::npos || !token || h.find_first_of("\r\n") != std::string::npos)
      throw UsageError("--header " + h + ": expected NAME:VALUE (a header name, then the value)");
    const std::size_t start = h.find_first_not_of(' ', colon + 1);
    headers.emplace_back(name, start == std::string::npos ? "" : h.substr(start));
  }
  const auto accuracies =
      accuracy_path.empty() ? std::map<std::string, double>{} : read_accuracy_fractions(accuracy_path);

  std::string body;
  try {
    if (!body_file.empty()) body = read_bounded_file(body_file, FileKind::kRequestBody);
  } catch (const FileReadError& e) {
    throw UsageError(std::string("--body-file ") + e.what());
  }
  if (body.empty()) {
    std::mt19937 rng(seed);
    body.resize(static_cast<size_t>(std::max(1, input_bytes)));
    for (auto& c : body) c = static_cast<char>(rng());
  }

  // The whole schedule first: sending never waits on the network.
  if (!modulation.empty()) {
    if (!rate_file.empty()) throw UsageError("--modulation moves --rate; a --rate-file already moves it: give one");
    try {
      segments = modulated_rate_segments(parse_modulation(modulation, "--modulation"), rate, duration_s, seed);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const std::vector<double> at_s = arrival_schedule(segments, process, seed);

  std::mutex mu;
  std::vector<Record> records;
  records.reserve(at_s.size());
  // Declared after what their callbacks touch, so they are destroyed
  // (cancelling stragglers) while those still exist; the sender before the
  // client it sends through.
  net::HttpClient::Options client_options;
  client_options.max_total_connections = static_cast<long>(connections);
  net::HttpClient client(client_options);
  BoundedSender sender(client, connections);
  const auto t0 = Clock::now();
  for (double t : at_s) {
    std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t)));
    net::HttpRequest req;
    req.method = "POST";
    req.url = target;
    req.body = body;
    req.timeout_ms = timeout_ms;
    req.headers = headers;
    sender.send(std::move(req), [&](net::HttpResponse r, std::int64_t waited_us) {
      std::lock_guard<std::mutex> lock(mu);
      records.push_back({r.elapsed_us + waited_us, r.status, r.error, r.header("x-lull-model")});
    });
  }
  const double send_s = std::chrono::duration<double>(Clock::now() - t0).count();
  // Every request sent completes within --timeout-ms, so the drain waits
  // while answers keep coming (none for --timeout-ms + 1 s: none will), at
  // most max(30 s, --duration) after the last send; what still waits for a
  // connection then is never sent, and what is in flight gets its timeout.
  sender.wait_all(timeout_ms + 1000, static_cast<std::int64_t>(std::max(drain_s, duration_s) * 1000));
  const size_t not_sent = sender.drop_waiting();
  const size_t lost = sender.wait_all(timeout_ms + 1000, timeout_ms + 1000) + not_sent;
  const BoundedSender::Counts sending = sender.counts();
  std::vector<Record> finished;
  {
    std::lock_guard<std::mutex> lock(mu);
    finished = records;
  }
  std::vector<std::int64_t> ok_latencies;
  std::map<int, int> http_errors;
  std::map<std::string, int> transport_errors, per_model;
  int late = 0, satisfied = 0;
  double acc_sum = 0;
  for (const auto& r : finished) {
    if (!r.error.empty()) {
      transport_errors[r.error]++;
      continue;
    }
    if (r.status < 200 || r.status >= 300) {
      http_errors[r.status]++;
      continue;
    }
    ok_latencies.push_back(r.latency_us);
    if (!r.model.empty()) per_model[r.model]++;
    if (slo_ms > 0 && r.latency_us > slo_ms * 1000)
      late++;
    else if (slo_ms > 0) {
      satisfied++;
      auto it = accuracies.find(r.model);
      if (it != accuracies.end()) acc_sum += it->second;
    }
  }
  const size_t sent = at_s.size();
  int errors = static_cast<int>(lost);
  for (const auto& [k, n] : http_errors) errors += n;
  for (const auto& [k, n] : transport_errors) errors += n;
  // What each request came to: every one sent is in exactly one of these.
  const auto http_count = [&](int code) {
    const auto it = http_errors.find(code);
    return it == http_errors.end() ? 0 : it->second;
  };
  int transport_count = 0;
  for (const auto& [k, n] : transport_errors) transport_count += n;
  const int count_503 = http_count(503), count_504 = http_count(504);
  int count_other = -count_503 - count_504;
  for (const auto& [k, n] : http_errors) count_other += n;

  char line[512];
  std::string out;
  std::snprintf(
      line, sizeof line,
      "sent %zu in %.2f s (achieved %.2f/s of %.2f/s asked, %s), answered ok %zu, errors %d, unanswered %zu\n", sent,
      send_s, sent / send_s, rate, arrivals.c_str(), ok_latencies.size(), errors, lost);
  out += line;
  std::snprintf(
      line, sizeof line,
      "answers: 2xx %zu, 503 %d, 504 %d, other HTTP %d, transport errors %d, unanswered %zu (never sent %zu)\n"
      "connections: at most %u (busiest %zu in flight); late %zu (waited for a free connection, "
      "up to %.1f ms; latency counted from the due time)\n",
      ok_latencies.size(), count_503, count_504, count_other, transport_count, lost, not_sent, connections,
      sending.max_in_flight_seen, sending.late, sending.max_wait_us / 1000.0);
  out += line;
  std::snprintf(line, sizeof line, "latency ms: p50 %.2f  p90 %.2f  p95 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n",
                percentile_ms(ok_latencies, 50), percentile_ms(ok_latencies, 90), percentile_ms(ok_latencies, 95),
                percentile_ms(ok_latencies, 99), percentile_ms(ok_latencies, 99.9), percentile_ms(ok_latencies, 100));
  out += line;
  for (const auto& [code, n] : http_errors) out += "  HTTP " + std::to_string(code) + ": " + std::to_string(n) + "\n";
  for (const auto& [e, n] : transport_errors) out += "  " + e + ": " + std::to_string(n) + "\n";
  const double violation_rate = ok_latencies.empty() ? 0 : static_cast<double>(late) / ok_latencies.size();
  const double accuracy = satisfied ? acc_sum / satisfied : 0;
  if (slo_ms > 0) {
    std::snprintf(line, sizeof line, "SLO %.1f ms: violation rate %.4f", slo_ms, violation_rate);
    out += line;
    if (!accuracies.empty()) {
      std::snprintf(line, sizeof line, ", accuracy per satisfied query %.4f", accuracy);
      out += line;
    }
    out += "\n";
  }
  for (const auto& [m, n] : per_model) out += "  model " + m + ": " + std::to_string(n) + "\n";
  (is_stdout(json_out) ? std::cerr : std::cout) << out;
  if (!json_out.empty()) {
    std::string j = "{";
    std::snprintf(line, sizeof line,
                  "\"rate_asked\":%.4f,\"rate_achieved\":%.4f,\"sent\":%zu,\"ok\":%zu,\"errors\":%d,\"unanswered\":%zu,"
                  "\"http_5xx\":%d,\"p50_ms\":%.4f,\"p90_ms\":%.4f,\"p99_ms\":%.4f,\"p999_ms\":%.4f,\"max_ms\":%.4f,"
                  "\"slo_ms\":%.4f,\"violation_rate\":%.6f,\"accuracy_per_satisfied\":%.6f",
                  rate, sent / send_s, sent, ok_latencies.size(), errors, lost,
                  static_cast<int>(
                      std::count_if(finished.begin(), finished.end(), [](const Record& r) { return r.status >= 500; })),
                  percentile_ms(ok_latencies, 50), percentile_ms(ok_latencies, 90), percentile_ms(ok_latencies, 99),
                  percentile_ms(ok_latencies, 99.9), percentile_ms(ok_latencies, 100), slo_ms, violation_rate,
                  accuracy);
    j += line;
    std::snprintf(line, sizeof line,
                  ",\"status_503\":%d,\"status_504\":%d,\"status_other\":%d,\"transport_errors\":%d,"
                  "\"connections\":%u,\"max_in_flight\":%zu,\"late\":%zu,\"max_wait_ms\":%.3f,\"not_sent\":%zu",
                  count_503, count_504, count_other, transport_count, connections, sending.max_in_flight_seen,
                  sending.late, sending.max_wait_us / 1000.0, not_sent);
    j += line;
    j += ",\"models\":{";
    bool first = true;
    for (const auto& [m, n] : per_model) {
      j += (first ? "\"" : ",\"") + m + "\":" + std::to_string(n);
      first = false;
    }
    j += "}}\n";
    write_output(json_out, j);
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace lull::cli
