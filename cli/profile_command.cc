// lull profile: measures end-to-end batch latency of each model through a
// model server's inference API (lull's batch contract, or the v2 wire with --backend v2) and writes a profile
// set in lull's format. Requests go one at a time, so each sample is one
// batch's latency on an otherwise idle worker, as the compiler assumes.
// Robustness: every (model, batch) starts with unrecorded warm-up requests
// (the first passes at a new shape pay allocator and kernel-selection costs),
// a pause between batch sizes lets the machine settle, and a far-out sample
// (compiler::far_out_samples) is measured again, named on stderr, so one slow
// outlier does not end up as a batch's latency (mdp-spec 1.1's OLS line and
// monotone pass would then carry it to, or pull it from, its neighbours).
// Inputs: with --inputs DIR the batches carry the files of DIR (cycled, in
// name order), which a real handler can decode; without it, random bytes,
// which only the stand-in's fake models accept.
#include <unistd.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <thread>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/accuracy_table.h"
#include "compiler/profile/latency_reduction.h"
#include "cli/batch_timer.h"
#include "cli/commands.h"
#include "cli/option_ranges.h"
#include "schema/input_limits.h"
#include "cli/output_file.h"
#include "cli/parse_options.h"
#include "cli/progress_line.h"
#include "cli/serve_backend.h"
#include "runtime/upstream/torchserve/batch_wire.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/v2/v2_model_check.h"
#include "runtime/upstream/torchserve/model_check.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"
#include "schema/profile_file.h"

namespace lull::cli {

namespace {

namespace po = boost::program_options;

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string provenance(const std::string& url) {
  char host[256] = "unknown-host";
  gethostname(host, sizeof host - 1);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::ostringstream out;
  out << "measured on " << host << " (" << cpu_model() << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " cores), " << date
      << ", by lull profile through " << url;
  return out.str();
}

std::vector<int> parse_batches(const std::string& text, int max_batch) {
  std::vector<int> out;
  if (text.empty()) {
    for (int b = 1; b <= max_batch; ++b) out.push_back(b);
    return out;
  }
  for (const auto& item : torchserve::split_list(text)) {
    int b = 0;
    try {
      b = std::stoi(item);
    } catch (const std::exception&) {
    }
    if (b < 1 || b > max_batch) throw UsageError("--batches: '" + item + "' is not in 1..--max-batch");
    out.push_back(b);
  }
  return out;
}

std::string ms_text(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << seconds * 1e3;
  return s.str();
}

}  // namespace

int run_profile(int argc, char** argv) {
  std::string worker, models_text, accuracy_path, out_path, batches_text, task, inputs_dir, token_file, management;
  int max_batch = 32, samples = 100, warmup = 3, input_bytes = 4096, pause_ms = 200;
  bool keep_outliers = false;
  std::int64_t timeout_ms = 60000;
  ServeBackendFlags backend_flags;
  po::options_description desc("lull profile: measure batch latencies through a model server's inference API");
  // clang-format off
  desc.add_options()
      ("worker", po::value(&worker)->required(), "model server base URL, e.g. http://127.0.0.1:8080")
      ("models", po::value(&models_text)->required(), "comma-separated model names loaded on it")
      ("max-batch", po::value(&max_batch)->default_value(32), "largest batch size")
      ("batches", po::value(&batches_text), "batch sizes to measure (default 1..max-batch); others are interpolated")
      ("samples", po::value(&samples)->default_value(100), "measurements per (model, batch)")
      ("warmup", po::value(&warmup)->default_value(3), "unrecorded requests before each (model, batch)")
      ("pause-ms", po::value(&pause_ms)->default_value(200), "idle pause before each batch size")
      ("keep-outliers", po::bool_switch(&keep_outliers),
       "keep far-out samples (over Q3 + 3 IQR and 1.5x the median, at most 1 in 50) instead of measuring them again")
      ("accuracy", po::value(&accuracy_path)->required(), "JSON {model: accuracy in [0,1]}")
      ("task", po::value(&task)->default_value("image-classification"), "task name written to the profile")
      ("input-bytes", po::value(&input_bytes)->default_value(4096), "size of each random query input (without --inputs)")
      ("inputs", po::value(&inputs_dir),
       "directory of real query inputs (e.g. profiles/inputs: small JPEG/PNG images), sent cycling through "
       "its files in name order instead of random bytes")
      ("torchserve-token-file", po::value(&token_file),
       "TorchServe's key_file.json: its inference key is sent as Authorization: Bearer KEY")
      ("timeout-ms", po::value(&timeout_ms)->default_value(60000), "per-request timeout")
      ("management-url", po::value(&management),
       "management API base URL, asked for each model's memory (default: --worker; TorchServe: port 8081)")
      ("out", po::value(&out_path)->required(), "profile JSON to write ('-' for stdout)");
  // clang-format on
  add_serve_backend_options(desc, backend_flags);
  const char* usage =
      "usage: lull profile --worker URL --models a,b,c --max-batch 32 --samples 100 --accuracy ACC.json --out "
      "PROFILE.json";
  if (!parse_command_line(argc, argv, desc, usage)) return 0;
  check_range("--max-batch", max_batch, 1, limits::kMaxBatch);
  check_range("--samples", samples, 1, limits::kMaxSamples);
  check_range("--warmup", warmup, 0, limits::kMaxSamples);
  check_range("--input-bytes", input_bytes, 1, limits::kMaxInputBytes);
  check_range("--pause-ms", pause_ms, 0, limits::kMaxIntervalMs);
  check_range("--timeout-ms", static_cast<double>(timeout_ms), 1, limits::kMaxIntervalMs);
  try {
    worker = torchserve::normalize_base_url(worker);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--worker ") + e.what());
  }
  const ServeBackend protocol(backend_flags);
  const torchserve::BatchWire& wire = protocol.wire() ? *protocol.wire() : torchserve::torchserve_wire();
  const auto models = torchserve::split_list(models_text);
  if (models.empty()) throw UsageError("--models: no model names");
  const auto accuracies = read_accuracy_fractions(accuracy_path);
  for (const auto& m : models)
    if (!accuracies.count(m)) throw UsageError(accuracy_path + ": no accuracy for model '" + m + "'");
  const auto batches = parse_batches(batches_text, max_batch);

  torchserve::TorchServeKeys keys;
  if (!token_file.empty()) {
    try {
      keys = torchserve::read_torchserve_key_file(token_file);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  try {
    management = management.empty() ? worker : torchserve::normalize_base_url(management);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--management-url ") + e.what());
  }
  net::HttpClient client;
  if (protocol.v2()) {
    // Each model's one declared input names what it is sent (as lull serve's start check learns it).
    std::map<std::string, std::string> declared;
    v2::V2ModelCheckOptions check = protocol.check_options(&declared);
    check.timeout_ms = timeout_ms;
    try {
      v2::check_v2_models_ready(client, {torchserve::WorkerEndpoint{worker, worker}}, models, check);
    } catch (const torchserve::ModelCheckError& e) {
      throw std::runtime_error(e.what());
    }
    protocol.learn(declared);
  }
  // memory_mb: what the management API reports for the loaded model
  // (docs/user-guide.md, "lull profile", Memory: what each server measures); 0 with a warning when
  // it reports nothing, so a profile is still written.
  auto memory_mb = [&](const std::string& model) {
    if (protocol.v2()) return 0.0;  // the Open Inference Protocol reports no model memory
    net::HttpRequest req;
    req.method = "GET";
    req.url = management + "/models/" + model;
    req.timeout_ms = timeout_ms;
    req.bearer_token = keys.management;
    const auto r = client.fetch(req);
    return r.ok() ? torchserve::model_memory_mb(r.body) : 0.0;
  };
  BatchTimer timer(worker, wire, batch_inputs(inputs_dir, input_bytes), timeout_ms, keys.inference);
  auto measure = [&](const std::string& model, int batch) { return timer.seconds(model, batch); };

  schema::ProfileSet set;
  set.set_task(task);
  set.set_provenance(provenance(worker));
  set.set_synthetic(false);
  const long total = static_cast<long>(models.size() * batches.size()) * samples;
  long done = 0;
  ProgressLine progress(std::cerr);  // in place on a terminal, a line per batch size in a log
  for (const auto& model : models) {
    auto* mp = set.add_models();
    mp->set_name(model);
    mp->set_accuracy(accuracies.at(model));
    std::ostringstream medians;
    for (int b : batches) {
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      for (int i = 0; i < warmup; ++i) measure(model, b);
      auto* lat = mp->add_latencies();
      lat->set_batch(static_cast<unsigned>(b));
      std::vector<double> got;
      for (int s = 0; s < samples; ++s) {
        got.push_back(measure(model, b));
        ++done;
        if (s % 10 == 0 || s + 1 == samples) {
          const std::string text = "profile: " + model + " batch " + std::to_string(b) + "/" +
                                   std::to_string(batches.back()) + "  (" + std::to_string(100 * done / total) +
                                   "% of " + std::to_string(total) + " requests)";
          if (s + 1 == samples)
            progress.step(text);
          else
            progress.update(text);
        }
      }
      // A far-out sample (a hiccup of the machine, not the model's tail) is
      // measured again (up to 3 times while it stays out), so that it cannot
      // tip the fitted line; each is named.
      double fence = 0;
      const auto far = keep_outliers ? std::vector<std::size_t>{} : compiler::far_out_samples(got, &fence);
      for (const std::size_t k : far) {
        double again = measure(model, b);
        int tries = 1;
        for (; again > fence && tries < 3; ++tries) again = measure(model, b);  // a second hiccup: once more
        progress.line("profile: " + model + " batch " + std::to_string(b) + ": sample " + std::to_string(k + 1) +
                      " took " + ms_text(got[k]) + " ms, over the far-out fence " + ms_text(fence) +
                      " ms (Q3 + 3 IQR); measured again: " + ms_text(again) + " ms" +
                      (tries > 1 ? " (try " + std::to_string(tries) + ")" : "") + " (--keep-outliers keeps it)");
        got[k] = again;
      }
      for (const double v : got) lat->add_samples_s(v);
      std::nth_element(got.begin(), got.begin() + got.size() / 2, got.end());
      medians << " b" << b << " " << std::fixed << std::setprecision(1) << got[got.size() / 2] * 1e3;
    }
    mp->set_memory_mb(memory_mb(model));
    progress.line("profile: " + model + ": median ms" + medians.str() +
                  (mp->memory_mb() > 0 ? "; memory " + std::to_string(static_cast<int>(mp->memory_mb() + 0.5)) + " MiB"
                                       : "; memory not reported by " + management + " (memory_mb left 0)"));
  }
  write_output(out_path, profile_set_json_text(set, out_path));
  std::cerr << "profile: wrote " << out_path << " (" << models.size() << " models, " << batches.size()
            << " batch sizes, " << samples << " samples each)\n";
  return 0;
}

}  // namespace lull::cli
