#include "runtime/frontend/frontend.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "runtime/net/base64.h"
#include "runtime/net/json_data_field.h"
#include "runtime/net/json_value.h"
#include "runtime/net/multipart_form.h"

namespace lull::frontend {

namespace {

// TorchServe's error type names by status, so clients that switch on them work.
const char* error_type(int status) {
  switch (status) {
    case 400:
      return "BadRequestException";
    case 404:
      return "ModelNotFoundException";
    case 405:
      return "MethodNotAllowedException";
    case 413:
      return "RequestTooLargeException";
    case 503:
      return "ServiceUnavailableException";
    case 504:
      return "RequestTimeoutException";
    default:
      return status >= 500 ? "InternalServerException" : "BadRequestException";
  }
}

net::ServerResponse error_response(int status, const std::string& message) {
  std::string text;  // control characters dropped: one line
  for (char c : message)
    if (static_cast<unsigned char>(c) >= 0x20) text += c;
  net::ServerResponse r;
  r.status = status;
  // Quoted as JSON (a message quoting a request's bytes that are not UTF-8
  // reads them as Latin-1: json_value.h).
  r.body = "{\"code\":" + std::to_string(status) + ",\"type\":\"" + error_type(status) +
           "\",\"message\":" + net::json_quoted(text) + "}";
  return r;
}

net::ServerResponse json_response(int status, std::string body, std::string content_type = "application/json") {
  net::ServerResponse r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

// {"data": "<base64>"} -> the bytes; other JSON -> the body itself; an
// error message for a body that is not JSON (or nested too deep).
bool decode_json_input(const std::string& body, std::string* input, std::string* error) {
  const net::JsonDataField j = net::read_json_data_field(body);
  if (j.too_deep) {
    *error = "JSON body nested deeper than " + std::to_string(net::kMaxJsonDepth) + " levels";
    return false;
  }
  if (!j.valid_json) {
    *error = "body is not valid JSON";
    return false;
  }
  if (!j.data) {  // any other JSON goes to the model as it is, as TorchServe hands it to the handler
    *input = body;
    return true;
  }
  auto bytes = net::base64_decode(*j.data);
  if (!bytes) {
    *error = "\"data\" is not valid base64";
    return false;
  }
  if (bytes->empty()) {
    *error = "\"data\" is empty";
    return false;
  }
  *input = std::move(*bytes);
  return true;
}

// The input bytes of a prediction request, in any form TorchServe accepts;
// false with *error set when there are none.
bool request_input(net::ServerRequest& req, std::string* input, std::string* error) {
  if (net::is_multipart_form(req.content_type)) {
    for (const char* field : {"data", "body"}) {
      auto value = net::multipart_field(req.content_type, req.body, field);
      if (!value) continue;
      if (value->empty()) break;
      *input = std::move(*value);
      return true;
    }
    *error = "multipart body lacks a non-empty field \"data\" or \"body\"";
    return false;
  }
  if (req.body.empty()) {
    *error = "empty body: send the input bytes, a multipart field \"data\", or {\"data\": \"<base64>\"} as JSON";
    return false;
  }
  if (req.content_type.rfind("application/json", 0) == 0) return decode_json_input(req.body, input, error);
  *input = std::move(req.body);
  return true;
}

// The task of /predictions/{task} or /predictions/{task}/{version}; false for other paths.
bool prediction_task(const std::string& target, std::string* task) {
  static const std::string kPrefix = "/predictions/";
  if (target.rfind(kPrefix, 0) != 0) return false;
  const std::string rest = target.substr(kPrefix.size());
  const auto slash = rest.find('/');
  *task = rest.substr(0, slash);
  if (task->empty()) return false;
  if (slash == std::string::npos) return true;
  const std::string version = rest.substr(slash + 1);  // accepted and ignored: lull picks the model
  return !version.empty() && version.find('/') == std::string::npos;
}

}  // namespace

void parse_listen_address(const std::string& text, std::string* host, int* port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("--listen " + text + ": expected HOST:PORT");
  try {
    size_t used = 0;
    const int p = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || p < 0 || p > 65535) throw std::invalid_argument("");
    *port = p;
  } catch (const std::exception&) {
    throw std::invalid_argument("--listen " + text + ": bad port");
  }
  *host = text.substr(0, colon);
}

Frontend::Frontend(QueryService& service, FrontendOptions options)
    : service_(service),
      options_(std::move(options)),
      server_(
          options_, [this](net::ServerRequest req, net::Respond respond) { route(std::move(req), std::move(respond)); },
          error_response, [this](int status) { responses_.count(status); }) {}

Frontend::~Frontend() { stop(); }

void Frontend::start() { server_.start(); }

void Frontend::stop() {
  lane_.stop();  // bodies still waiting for their decode are answered 503 before the server stops
  server_.stop();
}

void Frontend::route(net::ServerRequest req, net::Respond respond) {
  const bool get = req.method == "GET";
  if (req.target == "/ping") {
    if (!get) return respond(error_response(405, "use GET /ping"));
    const bool up = service_.healthy();
    return respond(json_response(up ? 200 : 500, up ? "{\"status\":\"Healthy\"}" : "{\"status\":\"Unhealthy\"}"));
  }
  if (req.target == "/v2" || req.target.rfind("/v2/", 0) == 0) return route_v2(std::move(req), std::move(respond));
  if (req.target == "/metrics") {
    if (!get) return respond(error_response(405, "use GET /metrics"));
    return respond(json_response(
        200, service_.metrics_text() + responses_.render() + net::render_http_server_stats(server_.stats()),
        "text/plain; version=0.0.4"));
  }
  std::string task;
  if (!prediction_task(req.target, &task)) return respond(error_response(404, "no such path: " + req.target));
  if (req.method != "POST" && req.method != "PUT")
    return respond(error_response(405, "use POST or PUT /predictions/" + task));
  if (task != options_.task)
    return respond(error_response(404, "unknown task '" + task + "'; this server serves '" + options_.task + "'"));
  predict(std::move(req), std::move(respond));
}

void Frontend::predict(net::ServerRequest req, net::Respond respond) {
  std::string input, error;
  if (!request_input(req, &input, &error)) return respond(error_response(400, error));
  const auto arrived = req.arrived;
  const auto waited_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - arrived).count();
  service_.serve_class_async(
      req.query_class, std::move(input), waited_us, [arrived, respond = std::move(respond)](Answer a) {
        net::ServerResponse res = a.http_status != 200 && !a.error_is_json ? error_response(a.http_status, a.body)
                                                                           : json_response(a.http_status, a.body);
        add_answer_headers(a, arrived, &res);
        respond(std::move(res));
      });
}

void add_answer_headers(const Answer& a, std::chrono::steady_clock::time_point arrived, net::ServerResponse* res) {
  const double latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - arrived).count();
  char latency[32];
  std::snprintf(latency, sizeof latency, "%.3f", latency_ms);
  res->headers.emplace_back("X-Lull-Latency-Ms", latency);
  if (!a.model.empty()) res->headers.emplace_back("X-Lull-Model", a.model);
  if (a.worker >= 0) res->headers.emplace_back("X-Lull-Worker", std::to_string(a.worker));
  if (a.retried) res->headers.emplace_back("X-Lull-Retried", "1");
  if (a.retry_after_s > 0) res->headers.emplace_back("Retry-After", std::to_string(a.retry_after_s));
}

}  // namespace lull::frontend
