#pragma once
// lull's model-less HTTP front end, shaped like TorchServe's
// inference API so its clients work unchanged: they send an input to
// /predictions/{task} (or /predictions/{task}/{version}; any version) and
// never name a model; the answer carries the prediction and headers naming
// the model used and the latency.
//   POST or PUT /predictions/{task}[/{version}]  with the input as
//     - the raw body (curl --data-binary @x, curl -T x),
//     - multipart/form-data field "data" or "body" (curl -F data=@x), or
//     - Content-Type application/json {"data": "<base64>"} (the decoded bytes),
//       or any other JSON (the body itself, as TorchServe hands it over)
//   GET /ping     -> 200 {"status": "Healthy"} while the service can answer,
//                    else 500 {"status": "Unhealthy"}
//   GET /metrics  -> Prometheus text (the service renders it)
// and the Open Inference Protocol (KServe v2) beside it (v2_routes.cc,
// docs/operators-guide.md), {task} standing for the model:
//   GET /v2/health/live, /v2/health/ready, /v2/models/{task}[/versions/{v}]/ready,
//   GET /v2, /v2/models/{task}[/versions/{v}] (server and model metadata),
//   POST /v2/models/{task}[/versions/{v}]/infer (JSON; v2_front_codec.h),
// with the protocol's error body {"error": "..."}.
// Errors use TorchServe's JSON shape {"code", "type", "message"}: empty or
// malformed bodies 400, bodies over max_body_bytes 413, an unknown task 404.
// The sockets, timeouts and connection cap are runtime/net/http_server.h's
// (event-driven: no thread per connection); this file is the routes. No
// general JSON parser runs on a request: the {"data": ...} form is read by
// json_data_field.h (bounded depth, linear time).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/frontend/decode_lane.h"
#include "runtime/net/http_response_counts.h"
#include "runtime/net/http_server.h"

namespace lull::frontend {

struct Answer {
  int http_status = 200;       // 200, or an error status (4xx: the model rejected the input; 503/504)
  std::string body;            // the prediction (JSON), or the error message
  bool error_is_json = false;  // error: `body` is already {"code","type","message"} (from the model)
  std::string model;           // header X-Lull-Model
  int worker = -1;             // header X-Lull-Worker
  bool retried = false;        // header X-Lull-Retried
  int retry_after_s = 0;       // header Retry-After when > 0 (the bouncer's 503)
};

// What the front end serves; implemented by the serve session and by test fakes.
class QueryService {
 public:
  virtual ~QueryService() = default;
  // Blocks the calling thread until the query is answered or failed.
  virtual Answer serve(std::string input) = 0;
  // What the front end calls: `done` runs exactly once, on any thread,
  // possibly before this returns. `waited_us`: how long the request has
  // been in lull already (since its header was complete); it counts as
  // queue time. By default it calls serve() on the caller's thread, which
  // suits fakes that answer at once; the serve session answers later
  // without holding the caller.
  virtual void serve_async(std::string input, std::int64_t waited_us, std::function<void(Answer)> done) {
    (void)waited_us;
    done(serve(std::move(input)));
  }
  // The same for a query that names its SLO class (the X-Lull-Class
  // header; "" when absent). One system has one class and ignores it; a
  // fleet (fleet_service.h) serves it by its class's queues.
  virtual void serve_class_async(const std::string& query_class, std::string input, std::int64_t waited_us,
                                 std::function<void(Answer)> done) {
    (void)query_class;
    serve_async(std::move(input), waited_us, std::move(done));
  }
  virtual std::string metrics_text() = 0;
  // GET /ping: true while some worker can serve every model of the active policy.
  virtual bool healthy() = 0;
  // The workers in rotation now (a fleet re-searches its split for them);
  // -1: not known (fakes).
  virtual int workers_up() { return -1; }
};

// The server's options (http_server.h: address, body limit, I/O threads,
// timeouts, connection cap) and the task served.
struct FrontendOptions : net::HttpServerOptions {
  FrontendOptions() {
    port = kDefaultPort;
    // Health and metrics: answered in a reserved slot past --max-connections.
    reserved_paths = {"/ping", "/metrics", "/v2/health/live", "/v2/health/ready"};
  }
  // Off the defaults of TorchServe (8080-8082, 7070-7071) and Triton (8000-8002),
  // so lull and its model servers share a host unchanged.
  static constexpr int kDefaultPort = 8070;
  std::string task;  // the one task served; POST /predictions/{task}
};

class Frontend {
 public:
  Frontend(QueryService& service, FrontendOptions options);
  ~Frontend();  // stops serving
  // Binds and starts serving on a background thread; throws
  // std::runtime_error("HOST:PORT: cannot listen") if the address is taken.
  void start();
  void stop();
  int port() const { return server_.port(); }
  net::HttpServerStats connection_stats() const { return server_.stats(); }

 private:
  void route(net::ServerRequest req, net::Respond respond);
  void predict(net::ServerRequest req, net::Respond respond);
  // /v2 and below (v2_routes.cc).
  void route_v2(net::ServerRequest req, net::Respond respond);
  void infer_v2(net::ServerRequest req, net::Respond respond);
  void decode_and_serve_v2(net::ServerRequest req, net::Respond respond);
  QueryService& service_;
  FrontendOptions options_;
  net::HttpResponseCounts responses_;  // every response sent, by code; appended to /metrics
  DecodeLane lane_;                    // large v2 bodies, decoded off the I/O threads (decode_lane.h)
  net::HttpServer server_;
};

// The answer's headers: X-Lull-Latency-Ms (since `arrived`), X-Lull-Model,
// X-Lull-Worker, X-Lull-Retried, Retry-After (both routes send them).
void add_answer_headers(const Answer& a, std::chrono::steady_clock::time_point arrived, net::ServerResponse* res);

// Parses "HOST:PORT" (for --listen); throws std::invalid_argument naming it.
void parse_listen_address(const std::string& text, std::string* host, int* port);

}  // namespace lull::frontend
