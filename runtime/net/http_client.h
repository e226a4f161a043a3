#pragma once
// An asynchronous HTTP/1.1 client: many requests in flight on one event-loop
// thread, connections kept alive and reused, a timeout per request. The
// TorchServe backend, the profiler and the load generator all talk HTTP
// through it, so libcurl stays behind this one interface (curl_http_client.cc
// is the only file that includes curl).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lull::serve {

struct HttpRequest {
  std::string method = "GET";        // "GET", "POST", "PATCH", "PUT" or "DELETE"
  std::string url;                   // absolute: http(s)://host:port/path
  std::string body;                  // POST, PATCH and PUT only
  std::string content_type;          // with a body; empty: application/octet-stream
  std::string bearer_token;          // non-empty: sent as "Authorization: Bearer TOKEN" (TorchServe's keys, Kubernetes)
  std::string ca_file;               // https: the CA bundle that signs the server (a Kubernetes service account's ca.crt)
  std::int64_t timeout_ms = 0;       // whole transfer; 0: no limit
  std::int64_t connect_timeout_ms = 1000;
};

struct HttpResponse {
  int status = 0;                    // 0 when no response arrived
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string error;                 // transport failure ("Connection refused", ...); empty otherwise
  bool timed_out = false;
  bool cancelled = false;
  std::int64_t elapsed_us = 0;       // from send() to completion

  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  // First header of that (lower-case) name, or "".
  std::string header(const std::string& lower_name) const;
  // "HTTP 503" / "timed out after 1000 ms" / the transport error: for messages.
  std::string describe() const;
};

using HttpRequestId = std::uint64_t;
using HttpCallback = std::function<void(HttpResponse)>;

class HttpClient {
 public:
  struct Options {
    long max_total_connections = 256;  // kept open for reuse
  };
  HttpClient();
  explicit HttpClient(Options options);
  ~HttpClient();  // requests still in flight complete with cancelled = true
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Thread-safe. `done` runs on the client's loop thread, exactly once; it
  // must not block (and must not call fetch()).
  HttpRequestId send(HttpRequest request, HttpCallback done);
  // Completes the request with cancelled = true if it has not completed yet.
  void cancel(HttpRequestId id);
  // Runs `task` on the loop thread soon; for callers that must not run
  // completion code on their own thread.
  void post(std::function<void()> task);
  // Blocking convenience for start-up checks and tools; never from a callback.
  HttpResponse fetch(HttpRequest request);

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace lull::serve
