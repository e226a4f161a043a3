#pragma once
// The event-driven HTTP/1.1 server under lull's front end (Boost.Beast over
// Asio; docs/dependencies.md says why). It exists so that no client can
// monopolize the front end: a connection holds no thread, only a socket and
// a small buffer, so slow or idle clients cost memory, not service.
//   - a connection waits for its next request at most idle_timeout_ms, reads
//     a request header within header_timeout_ms of its first byte and the
//     body within body_timeout_ms of the header (slowloris); a timed-out
//     connection is closed;
//   - at max_connections, a new connection sheds the oldest kept-alive idle
//     one (or one lingering after its answer), else the one that has been
//     silent or reading a request header longest, once that has lasted
//     half of header_timeout_ms; a shed never drops a request that arrived meanwhile (its
//     victim keeps it, and the new connection is refused instead). When
//     nothing can be shed, the new connection takes one of reserved_slots
//     slots beyond the cap: its request header is read (within
//     0.5 s of the accept) and a GET of one of
//     reserved_paths (health and metrics) is served there, as an operator's
//     admin port would; anything else there, or a newcomer with every
//     reserved slot taken, is answered 503 with Retry-After: 1 and closed;
//   - bodies over max_body_bytes get 413, chunked ones included (counted as
//     they arrive, never buffered past the limit); conflicting Content-Length
//     headers get 400 (Beast's parser), and so does any Transfer-Encoding
//     other than exactly `chunked`, or one beside a Content-Length (request
//     smuggling; RFC 9112 6.1);
//   - requests are handed over complete, stamped with the time their header
//     was complete, and answered asynchronously: the handler may call
//     `respond` later from any thread, so a query waiting for its batch
//     holds no I/O thread.
// Beast stays inside http_server.cc; this header names no Boost type.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lull::net {

// The event loop's threads by default: the CPUs this process may run on (its
// affinity mask: a shard pinned to one core gets one), at most 2. A second
// thread on the same core only adds hand-offs and lock contention between
// the two (measured: docs/benchmarks.md, "Throughput of one shard").
int default_io_threads();

struct HttpServerOptions {
  std::string host = "127.0.0.1";         // loopback unless asked otherwise
  int port = 0;                           // 0 picks a free port
  std::size_t max_body_bytes = 4 << 20;   // larger bodies get 413
  int io_threads = default_io_threads();  // threads running the event loop
  int header_timeout_ms = 10000;          // first byte of a request to the end of its header
  int body_timeout_ms = 30000;            // end of the header to the end of the body; also a response's write
  int idle_timeout_ms = 60000;            // a kept-alive connection's wait for its next request
  int max_connections = 1024;             // open connections; see the shedding above
  int reserved_slots = 1024;  // beyond max_connections, read for health and metrics (each holds a header buffer)
  std::vector<std::string> reserved_paths;  // what a reserved slot serves (GET only)
  // The clock (steady, microseconds) the shed choice reads: how long a
  // connection has been in its state, against half of header_timeout_ms, and
  // which is oldest. Empty: std::chrono::steady_clock. Tests move their own
  // instead of waiting; the timeouts above run on the event loop's timers.
  std::function<std::int64_t()> now_us;
};

struct ServerRequest {
  std::string method;        // "GET", "POST", ...
  std::string target;        // the path, query string removed
  std::string content_type;  // the Content-Type header, or ""
  std::string query_class;   // lull's X-Lull-Class header (a fleet's SLO class, docs/operators-guide.md), or ""
  // Inference-Header-Content-Length (the binary tensor extension of the Open
  // Inference Protocol: the body's JSON part is that long, raw tensors follow), or "".
  std::string inference_header_length;
  std::string content_encoding;  // Content-Encoding (gzip, deflate: content_encoding.h), or ""
  std::string client;            // the peer's IP address (whose turn it is: frontend/decode_lane.h), or ""
  std::string body;
  std::chrono::steady_clock::time_point arrived;  // when the header was complete
};

struct ServerResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// Sends the response; call exactly once, from any thread, at any time (a
// call after the server stopped or the client left is dropped).
using Respond = std::function<void(ServerResponse)>;
using RequestHandler = std::function<void(ServerRequest, Respond)>;
// The body of the server's own refusals (400, 413, 431, 503), by status and message.
using ErrorRenderer = std::function<ServerResponse(int status, const std::string& message)>;

// Connection counts, for /metrics.
struct HttpServerStats {
  std::uint64_t open = 0;             // connections open now
  std::uint64_t accepted = 0;         // connections accepted since start
  std::uint64_t idle_timeouts = 0;    // closed: no request within idle_timeout_ms
  std::uint64_t header_timeouts = 0;  // closed: header not complete within header_timeout_ms
  std::uint64_t body_timeouts = 0;    // closed: body (or a response write) not done in body_timeout_ms
  std::uint64_t shed = 0;             // closed to make room at max_connections
  std::uint64_t refused = 0;          // answered 503 at max_connections (all busy)
  std::uint64_t reserved = 0;         // health/metrics requests served in a reserved slot past the cap
};

class HttpServer {
 public:
  // `on_response` is called with the status of every response sent,
  // the server's own refusals included.
  HttpServer(HttpServerOptions options, RequestHandler handler, ErrorRenderer render_error,
             std::function<void(int)> on_response);
  ~HttpServer();  // stops
  // Binds, listens and starts the I/O threads; throws std::runtime_error
  // "HOST:PORT: cannot listen ..." when the address is taken.
  void start();
  // Closes the listener after answering 503 to the connections still in its
  // accept queue (so none is reset): new SYNs are dropped from the stop's
  // start (Linux; a client connecting then is refused after its SYN retry,
  // ~1 s), handshakes under way get 20 ms to complete. Then writes the
  // responses already handed over and answers the first request of every
  // new connection 503 (at most ~1 s for all of it), closes every
  // connection and joins the I/O threads; responses not yet handed over are
  // dropped. Requests read in full during the stop get 503. Idempotent.
  void stop();
  int port() const;
  HttpServerStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The stats as Prometheus text (lull_http_connections...).
std::string render_http_server_stats(const HttpServerStats& s);

}  // namespace lull::net
