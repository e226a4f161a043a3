#pragma once
// HTTP as lull's runtime uses it: send a request, be called back once with
// the response. Everything that talks to a server (the TorchServe backend
// and its management calls, the model checks, the worker pools, the
// Kubernetes API, the profiler and load generator) takes an HttpTransport,
// so libcurl stays in one file (HttpClient, curl_http_client.cc) and tests
// hand in an in-memory fake (test/support/fake_http_transport.h) instead of
// starting servers.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace lull::net {

// The default cap on a response body: far above any answer lull expects
// (predictions of one batch, a model list, a Kubernetes object list).
inline constexpr std::int64_t kDefaultMaxResponseBytes = std::int64_t{256} << 20;

struct HttpRequest {
  std::string method = "GET";  // "GET", "POST", "PATCH", "PUT" or "DELETE"
  std::string url;             // absolute: http(s)://host:port/path
  std::string body;            // POST, PATCH and PUT only
  std::string content_type;    // with a body; empty: application/octet-stream
  std::string bearer_token;    // non-empty: sent as "Authorization: Bearer TOKEN" (TorchServe's keys, Kubernetes)
  std::vector<std::pair<std::string, std::string>> headers;  // more request headers (lull loadgen --header)
  std::string ca_file;          // https: the CA bundle that signs the server (a Kubernetes service account's ca.crt)
  std::int64_t timeout_ms = 0;  // whole transfer; 0: no limit
  std::int64_t connect_timeout_ms = 1000;
  // A body larger than this ends the transfer with too_large (a broken or
  // hostile server cannot make lull buffer without bound); 0: no cap.
  std::int64_t max_response_bytes = kDefaultMaxResponseBytes;
};

struct HttpResponse {
  int status = 0;  // 0 when no response arrived
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string error;  // transport failure ("Connection refused", ...); empty otherwise
  bool timed_out = false;
  bool cancelled = false;
  bool too_large = false;       // the body passed request.max_response_bytes; error says so
  std::int64_t elapsed_us = 0;  // from send() to completion

  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  // First header of that (lower-case) name, or "".
  std::string header(const std::string& lower_name) const;
  // "HTTP 503" / "timed out after 1000 ms" / the transport error: for messages.
  std::string describe() const;
};

// "response body over the cap of N bytes": the error of a too_large response, from every transport.
std::string describe_response_cap(std::int64_t max_response_bytes);

using HttpRequestId = std::uint64_t;
using HttpCallback = std::function<void(HttpResponse)>;

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Thread-safe. `done` runs on the transport's own thread, exactly once; it
  // must not block (and must not call fetch()).
  virtual HttpRequestId send(HttpRequest request, HttpCallback done) = 0;
  // Completes the request with cancelled = true if it has not completed yet.
  virtual void cancel(HttpRequestId id) = 0;
  // Runs `task` on the transport's thread soon; for callers that must not
  // run completion code on their own thread.
  virtual void post(std::function<void()> task) = 0;
  // Blocking convenience over send() for start-up checks and tools; never
  // from a callback.
  HttpResponse fetch(HttpRequest request);
};

}  // namespace lull::net
