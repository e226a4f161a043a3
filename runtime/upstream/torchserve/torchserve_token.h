#pragma once
// TorchServe's token authorization (on by default since TorchServe 0.11): the
// server writes its keys to key_file.json and refuses API calls without
// "Authorization: Bearer KEY" (the inference key on the inference API, the
// management key on the management API). lull reads that file and recognises
// the server's refusal, so a missing or wrong token is reported as such, not
// as a missing model or a broken worker.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "runtime/net/http_transport.h"
#include "runtime/upstream/torchserve/worker_endpoint.h"

namespace lull::torchserve {

struct TorchServeKeys {
  std::string inference;  // empty: send no Authorization header
  std::string management;
};

// Reads TorchServe's key_file.json:
//   {"management": {"key": "...", "expiration time": "..."},
//    "inference":  {"key": "...", "expiration time": "..."},
//    "API":        {"key": "..."}}
// Both "management.key" and "inference.key" must be non-empty strings of
// printable ASCII without spaces (they become an HTTP header); other fields
// are ignored; the file is at most 1 MiB. Throws
// std::invalid_argument("PATH: field: why"), one line.
TorchServeKeys read_torchserve_key_file(const std::string& path);

// The key file while serving: TorchServe's keys expire (60 minutes by
// default) and are replaced through its /token API, which rewrites
// key_file.json; the old key is refused from then on. So the file is read
// again when it changes (refresh_if_changed(), polled with the health
// checks: its modification time, size or inode) and when the server refuses
// a key (newer_inference_key()). Each change of keys is logged once, as one
// line, and counted; a file that cannot be read, or is not a key file (half
// written), keeps the keys in use (logged once per distinct error).
// Thread-safe.
class TorchServeKeyFile {
 public:
  using Log = std::function<void(const std::string& line)>;
  // Reads the file now; throws as read_torchserve_key_file does.
  explicit TorchServeKeyFile(std::string path, Log log = {});

  const std::string& path() const { return path_; }
  TorchServeKeys keys() const;
  std::string inference_key() const;

  // Reads the file again if it changed since it was last read; true when
  // that changed the keys (then logged and counted, `why` in the line).
  bool refresh_if_changed(const std::string& why = "the file changed");
  // The server refused `sent`: counted, and the file read again if it
  // changed. True (with *fresh) when the file's inference key differs from
  // `sent`, so that the call is worth repeating with it.
  bool newer_inference_key(const std::string& sent, std::string* fresh);

  std::uint64_t reloads() const;      // times the keys changed
  std::uint64_t refusals() const;     // refused inference keys reported
  std::uint64_t read_errors() const;  // reads that found no valid key file
  // Prometheus text: lull_torchserve_key_reloads_total,
  // lull_torchserve_token_refusals_total, lull_torchserve_key_file_errors_total.
  std::string metrics_text() const;

 private:
  struct Stamp {
    long long mtime_ns = 0, size = -1, inode = 0;
    bool operator==(const Stamp& o) const { return mtime_ns == o.mtime_ns && size == o.size && inode == o.inode; }
  };
  Stamp stamp() const;
  bool reload_locked(const std::string& why);  // under mu_

  const std::string path_;
  Log log_;
  mutable std::mutex mu_;
  TorchServeKeys keys_;
  Stamp read_stamp_;    // of the file the keys came from
  Stamp failed_stamp_;  // of the last file that was no valid key file (not read again)
  std::string last_error_;
  std::uint64_t reloads_ = 0, refusals_ = 0, read_errors_ = 0;
};

// The key files of several servers: each TorchServe instance writes its own
// key_file.json with its own keys. `pattern` is --torchserve-token-file:
// "{port}" and "{host}" in it stand for a server's inference port and host
// (e.g. /run/ts-{port}/key_file.json), one file per server; a path without
// them is one file every server shares. Each file is a TorchServeKeyFile
// (read again on change and on refusal). Thread-safe.
class TorchServeKeyFiles {
 public:
  // Without placeholders the one file is read now (throws as
  // read_torchserve_key_file does); with them, files are read per server (add()).
  TorchServeKeyFiles(std::string pattern, TorchServeKeyFile::Log log = {});

  bool per_server() const { return per_server_; }
  const std::string& pattern() const { return pattern_; }
  // The file of the server with these URLs, read now if it was not yet;
  // throws std::invalid_argument naming the file when it cannot be read.
  TorchServeKeyFile& add(const WorkerEndpoint& server);
  // The file of a server by its inference or management URL: its file when
  // added, else (per server) read now from the inference URL's host and
  // port; nullptr when that cannot be read (tried again at refresh).
  TorchServeKeyFile* of(const std::string& url);
  // TorchServeKeyFile::refresh_if_changed on every file read so far, and
  // files that could not be read are tried again; true when keys changed.
  bool refresh_if_changed(const std::string& why = "the file changed");
  // The path of the server at this inference URL (the pattern expanded).
  std::string path_for(const std::string& inference_url) const;
  // The sums over the files of TorchServeKeyFile::metrics_text's counters.
  std::string metrics_text() const;

 private:
  TorchServeKeyFile* open_locked(const std::string& path);  // under mu_; nullptr when unreadable

  const std::string pattern_;
  const bool per_server_;
  TorchServeKeyFile::Log log_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<TorchServeKeyFile>> files_;  // by path
  std::map<std::string, std::string> path_of_url_;                   // inference and management URLs
  std::map<std::string, std::string> unreadable_;                    // path -> its last error
};

// True when the server refused the call for its token: 401 or 403, or
// TorchServe's own answer (400 with "InvalidKeyException").
bool is_token_refusal(const net::HttpResponse& response);

// One line for a refusal: "model server URL refused the inference token
// (HTTP 400): it is missing or wrong; ...". `api` is "inference" or "management".
std::string describe_token_refusal(const std::string& url, const std::string& api, bool token_sent,
                                   const net::HttpResponse& response);

}  // namespace lull::torchserve
