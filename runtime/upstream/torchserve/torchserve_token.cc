// Reading TorchServe's key file and recognising its token refusals (why: see
// torchserve_token.h).
#include "runtime/upstream/torchserve/torchserve_token.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "runtime/net/prometheus_text.h"
#include "schema/bounded_file.h"

namespace lull::torchserve {

namespace {

using google::protobuf::Value;

constexpr std::size_t kMaxKeyFileBytes = 1 << 20;  // TorchServe's file is a few hundred bytes
constexpr std::size_t kMaxKeyBytes = 4096;

std::string key_of(const google::protobuf::Struct& file, const std::string& path, const std::string& section) {
  const auto& f = file.fields();
  auto s = f.find(section);
  if (s == f.end() || s->second.kind_case() != Value::kStructValue)
    throw std::invalid_argument(path + ": " + section + ": missing (expected TorchServe's key_file.json)");
  const auto& sf = s->second.struct_value().fields();
  auto k = sf.find("key");
  if (k == sf.end() || k->second.kind_case() != Value::kStringValue || k->second.string_value().empty())
    throw std::invalid_argument(path + ": " + section + ".key: missing or not a non-empty string");
  // The key goes into an "Authorization: Bearer" header: a line break or a
  // control byte in it would end or forge the header.
  const std::string& key = k->second.string_value();
  if (key.size() > kMaxKeyBytes || !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; }))
    throw std::invalid_argument(path + ": " + section + ".key: must be at most " + std::to_string(kMaxKeyBytes) +
                                " printable ASCII characters without spaces (it is sent as an HTTP header)");
  return key;
}

}  // namespace

TorchServeKeys read_torchserve_key_file(const std::string& path) {
  // The bounded reader (schema/bounded_file.h): a FIFO hung the blocking
  // open here, at start-up and at every rotation check.
  static_assert(kMaxKeyFileBytes == 1 << 20, "the key file kind's cap (schema/bounded_file.cc)");
  std::string text;
  try {
    text = read_bounded_file(path, FileKind::kKey);
  } catch (const FileReadError& e) {
    const std::string why = e.what();
    if (why.find(": cannot open: ") != std::string::npos)
      throw std::invalid_argument(path + ": cannot read the TorchServe key file");
    if (why.find("more than a key file may hold") != std::string::npos)
      throw std::invalid_argument(path + ": larger than " + std::to_string(kMaxKeyFileBytes) +
                                  " bytes (expected TorchServe's key_file.json)");
    throw std::invalid_argument(why + " (expected TorchServe's key_file.json)");
  }
  google::protobuf::Struct file;
  if (!google::protobuf::util::JsonStringToMessage(text, &file).ok())
    throw std::invalid_argument(path + ": not a JSON object (expected TorchServe's key_file.json)");
  TorchServeKeys keys;
  keys.inference = key_of(file, path, "inference");
  keys.management = key_of(file, path, "management");
  return keys;
}

TorchServeKeyFile::TorchServeKeyFile(std::string path, Log log) : path_(std::move(path)), log_(std::move(log)) {
  read_stamp_ = stamp();
  keys_ = read_torchserve_key_file(path_);
}

TorchServeKeyFile::Stamp TorchServeKeyFile::stamp() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return Stamp{};
  return Stamp{static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
               static_cast<long long>(st.st_size), static_cast<long long>(st.st_ino)};
}

TorchServeKeys TorchServeKeyFile::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_;
}

std::string TorchServeKeyFile::inference_key() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_.inference;
}

bool TorchServeKeyFile::reload_locked(const std::string& why) {
  const Stamp now = stamp();
  if (now == read_stamp_ || now == failed_stamp_) return false;
  TorchServeKeys fresh;
  try {
    fresh = read_torchserve_key_file(path_);
  } catch (const std::invalid_argument& e) {
    // Perhaps half written: read again at its next change (or refusal).
    ++read_errors_;
    failed_stamp_ = now;
    if (e.what() != last_error_ && log_) log_(std::string(e.what()) + "; still using the keys read before");
    last_error_ = e.what();
    return false;
  }
  read_stamp_ = now;
  last_error_.clear();
  if (fresh.inference == keys_.inference && fresh.management == keys_.management) return false;
  const bool inference = fresh.inference != keys_.inference, management = fresh.management != keys_.management;
  keys_ = std::move(fresh);
  ++reloads_;
  if (log_)
    log_("TorchServe keys re-read from " + path_ + " (" + why + "): new " +
         (inference && management ? "inference and management keys"
          : inference             ? "inference key"
                                  : "management key") +
         " (reload " + std::to_string(reloads_) + ")");
  return true;
}

bool TorchServeKeyFile::refresh_if_changed(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  return reload_locked(why);
}

bool TorchServeKeyFile::newer_inference_key(const std::string& sent, std::string* fresh) {
  std::lock_guard<std::mutex> lock(mu_);
  ++refusals_;
  reload_locked("after the server refused the inference key");
  if (keys_.inference == sent) return false;
  *fresh = keys_.inference;
  return true;
}

std::uint64_t TorchServeKeyFile::reloads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reloads_;
}

std::uint64_t TorchServeKeyFile::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

std::uint64_t TorchServeKeyFile::read_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return read_errors_;
}

namespace {
// The key counters in Prometheus' text format: one file's, or the sums over a server's files.
std::string key_metrics_text(std::uint64_t reloads, std::uint64_t refusals, std::uint64_t read_errors) {
  std::string out;
  net::prom::family(out, "lull_torchserve_key_reloads_total", "counter",
                    "Times new keys were read from the TorchServe key files.");
  net::prom::sample(out, "lull_torchserve_key_reloads_total", static_cast<double>(reloads));
  net::prom::family(out, "lull_torchserve_token_refusals_total", "counter",
                    "Requests a model server refused for their inference key.");
  net::prom::sample(out, "lull_torchserve_token_refusals_total", static_cast<double>(refusals));
  net::prom::family(out, "lull_torchserve_key_file_errors_total", "counter",
                    "Reads of a changed key file that found no valid keys (kept the keys before).");
  net::prom::sample(out, "lull_torchserve_key_file_errors_total", static_cast<double>(read_errors));
  return out;
}
}  // namespace

std::string TorchServeKeyFile::metrics_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  return key_metrics_text(reloads_, refusals_, read_errors_);
}

namespace {

bool has_placeholder(const std::string& pattern) {
  return pattern.find("{port}") != std::string::npos || pattern.find("{host}") != std::string::npos;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

}  // namespace

TorchServeKeyFiles::TorchServeKeyFiles(std::string pattern, TorchServeKeyFile::Log log)
    : pattern_(std::move(pattern)), per_server_(has_placeholder(pattern_)), log_(std::move(log)) {
  if (!per_server_) files_[pattern_] = std::make_unique<TorchServeKeyFile>(pattern_, log_);
}

std::string TorchServeKeyFiles::path_for(const std::string& inference_url) const {
  if (!per_server_) return pattern_;
  // http://HOST:PORT (normalize_base_url's form); an IPv6 host keeps its brackets.
  std::string rest =
      inference_url.substr(inference_url.find("://") == std::string::npos ? 0 : inference_url.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  const auto colon = rest.rfind(':');
  const bool has_port = colon != std::string::npos && rest.find(']', colon) == std::string::npos;
  std::string path = pattern_;
  replace_all(path, "{host}", has_port ? rest.substr(0, colon) : rest);
  replace_all(path, "{port}", has_port ? rest.substr(colon + 1) : "80");
  return path;
}

TorchServeKeyFile* TorchServeKeyFiles::open_locked(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second.get();
  try {
    auto file = std::make_unique<TorchServeKeyFile>(path, log_);
    unreadable_.erase(path);
    return (files_[path] = std::move(file)).get();
  } catch (const std::invalid_argument& e) {
    if (log_ && unreadable_[path] != e.what()) log_(std::string(e.what()) + "; that server gets no key until it can");
    unreadable_[path] = e.what();
    return nullptr;
  }
}

TorchServeKeyFile& TorchServeKeyFiles::add(const WorkerEndpoint& server) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string path = path_for(server.inference_url);
  path_of_url_[server.inference_url] = path;
  if (!server.management_url.empty()) path_of_url_[server.management_url] = path;
  auto it = files_.find(path);
  if (it != files_.end()) return *it->second;
  auto file = std::make_unique<TorchServeKeyFile>(path, log_);  // throws naming the file
  unreadable_.erase(path);
  return *(files_[path] = std::move(file));
}

TorchServeKeyFile* TorchServeKeyFiles::of(const std::string& url) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!per_server_) return files_.begin()->second.get();
  const auto known = path_of_url_.find(url);
  const std::string path = known != path_of_url_.end() ? known->second : path_for(url);
  const auto it = files_.find(path);
  if (it != files_.end()) return it->second.get();
  if (unreadable_.count(path)) return nullptr;  // tried again at refresh, not on every request
  if (known == path_of_url_.end()) path_of_url_[url] = path;
  return open_locked(path);
}

bool TorchServeKeyFiles::refresh_if_changed(const std::string& why) {
  std::vector<TorchServeKeyFile*> files;
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> retry;
    for (const auto& [path, error] : unreadable_) retry.push_back(path);
    for (const auto& path : retry) changed = open_locked(path) != nullptr || changed;
    for (auto& [path, file] : files_) files.push_back(file.get());
  }
  for (TorchServeKeyFile* f : files) changed = f->refresh_if_changed(why) || changed;
  return changed;
}

std::string TorchServeKeyFiles::metrics_text() const {
  std::uint64_t reloads = 0, refusals = 0, errors = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [path, file] : files_) {
      reloads += file->reloads();
      refusals += file->refusals();
      errors += file->read_errors();
    }
  }
  return key_metrics_text(reloads, refusals, errors);
}

bool is_token_refusal(const net::HttpResponse& response) {
  if (!response.error.empty()) return false;
  if (response.status == 401 || response.status == 403) return true;
  return response.status == 400 && response.body.find("InvalidKeyException") != std::string::npos;
}

std::string describe_token_refusal(const std::string& url, const std::string& api, bool token_sent,
                                   const net::HttpResponse& response) {
  std::string line =
      "model server " + url + " refused the " + api + " token (HTTP " + std::to_string(response.status) + "): ";
  line += token_sent ? "the " + api + " key of --torchserve-token-file is wrong or expired"
                     : "no token was sent; give --torchserve-token-file with TorchServe's key_file.json";
  return line;
}

}  // namespace lull::torchserve
