#include "cli/batch_timer.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "cli/commands.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "schema/bounded_file.h"

namespace lull::cli {

std::vector<std::string> batch_inputs(const std::string& dir, int random_bytes) {
  std::vector<std::string> out;
  if (dir.empty()) {
    std::mt19937 rng(42);
    out.emplace_back(static_cast<size_t>(random_bytes), '\0');
    for (auto& c : out.back()) c = static_cast<char>(rng());
    return out;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError("--inputs " + dir + ": not a directory");
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.' && e.path().extension() != ".md")
      paths.push_back(e.path());
  if (ec) throw UsageError("--inputs " + dir + ": " + ec.message());
  if (paths.empty()) throw UsageError("--inputs " + dir + ": no input files");
  std::sort(paths.begin(), paths.end());
  try {
    for (const auto& p : paths) out.push_back(read_bounded_file(p.string(), FileKind::kRequestBody));
  } catch (const FileReadError& e) {
    throw UsageError(std::string("--inputs ") + e.what());
  }
  return out;
}

BatchTimer::BatchTimer(std::string base_url, const torchserve::BatchWire& wire, std::vector<std::string> inputs,
                       std::int64_t timeout_ms, std::string bearer_token)
    : url_(std::move(base_url)),
      wire_(wire),
      inputs_(std::move(inputs)),
      timeout_ms_(timeout_ms),
      token_(std::move(bearer_token)) {}

double BatchTimer::seconds(const std::string& model, int batch) {
  std::vector<const std::string*> batch_inputs;
  for (int i = 0; i < batch; ++i) batch_inputs.push_back(&inputs_[next_++ % inputs_.size()]);
  net::HttpRequest req = wire_.batch_request(url_, model, batch_inputs);
  req.timeout_ms = timeout_ms_;
  req.bearer_token = token_;
  const auto r = client_.fetch(req);
  if (torchserve::is_token_refusal(r))
    throw std::runtime_error(torchserve::describe_token_refusal(url_, "inference", !token_.empty(), r));
  if (!r.ok()) throw std::runtime_error(req.url + " (batch " + std::to_string(batch) + "): " + r.describe());
  wire_.decode_batch(r.body, static_cast<size_t>(batch));  // the contract holds
  return r.elapsed_us / 1e6;
}

}  // namespace lull::cli
