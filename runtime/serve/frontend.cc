#include "runtime/serve/frontend.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "runtime/serve/base64.h"
#include "runtime/serve/keepalive_server.h"

namespace lull::serve {

namespace {

// TorchServe's error type names by status, so clients that switch on them work.
const char* error_type(int status) {
  switch (status) {
    case 400: return "BadRequestException";
    case 404: return "ModelNotFoundException";
    case 405: return "MethodNotAllowedException";
    case 413: return "RequestTooLargeException";
    case 503: return "ServiceUnavailableException";
    case 504: return "RequestTimeoutException";
    default: return status >= 500 ? "InternalServerException" : "BadRequestException";
  }
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) escaped += c;
  }
  res.status = status;
  res.set_content("{\"code\":" + std::to_string(status) + ",\"type\":\"" + error_type(status) +
                      "\",\"message\":\"" + escaped + "\"}",
                  "application/json");
}

// {"data": "<base64>"} -> the bytes; an error message otherwise.
bool decode_json_input(const std::string& body, std::string* input, std::string* error) {
  google::protobuf::Value v;
  if (!google::protobuf::util::JsonStringToMessage(body, &v).ok()) {
    *error = "body is not valid JSON";
    return false;
  }
  if (v.kind_case() != google::protobuf::Value::kStructValue) {
    *error = "JSON body must be an object {\"data\": \"<base64>\"}";
    return false;
  }
  const auto& f = v.struct_value().fields();
  auto it = f.find("data");
  if (it == f.end() || it->second.kind_case() != google::protobuf::Value::kStringValue) {
    *error = "JSON body lacks the string field \"data\"";
    return false;
  }
  auto bytes = base64_decode(it->second.string_value());
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
bool request_input(const httplib::Request& req, std::string* input, std::string* error) {
  if (req.is_multipart_form_data()) {
    for (const char* field : {"data", "body"}) {
      if (!req.has_file(field)) continue;
      *input = req.get_file_value(field).content;
      if (input->empty()) break;
      return true;
    }
    *error = "multipart body lacks a non-empty field \"data\" or \"body\"";
    return false;
  }
  if (req.body.empty()) {
    *error = "empty body: send the input bytes, a multipart field \"data\", or {\"data\": \"<base64>\"} as JSON";
    return false;
  }
  if (req.get_header_value("Content-Type").rfind("application/json", 0) == 0)
    return decode_json_input(req.body, input, error);
  *input = req.body;
  return true;
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
    : service_(service), options_(std::move(options)), server_(std::make_unique<KeepAliveServer>()) {
  const int threads = options_.threads;
  // httplib's API takes ownership of a raw TaskQueue pointer; the pool is
  // sized so that blocked handlers (one per query in service) never starve it.
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_keep_alive_max_count(1000000);
  server_->set_tcp_nodelay(true);
  // httplib calls the logger once per response written, refusals and 413 included.
  server_->set_logger([this](const httplib::Request&, const httplib::Response& res) { responses_.count(res.status); });
  install_routes();
}

Frontend::~Frontend() { stop(); }

void Frontend::install_routes() {
  server_->Get("/ping", [this](const httplib::Request&, httplib::Response& res) {
    const bool up = service_.healthy();
    res.status = up ? 200 : 500;
    res.set_content(up ? "{\"status\":\"Healthy\"}" : "{\"status\":\"Unhealthy\"}", "application/json");
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(service_.metrics_text() + responses_.render(), "text/plain; version=0.0.4");
  });
  const auto predict = [this](const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    if (req.matches[1] != options_.task) return send_error(res, 404, "unknown task '" + std::string(req.matches[1]) + "'; this server serves '" + options_.task + "'");
    std::string input, error;
    if (!request_input(req, &input, &error)) return send_error(res, 400, error);
    Answer a = service_.serve(std::move(input));
    const double latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    char latency[32];
    std::snprintf(latency, sizeof latency, "%.3f", latency_ms);
    res.set_header("X-Lull-Latency-Ms", latency);
    if (!a.model.empty()) res.set_header("X-Lull-Model", a.model);
    if (a.worker >= 0) res.set_header("X-Lull-Worker", std::to_string(a.worker));
    if (a.retried) res.set_header("X-Lull-Retried", "1");
    if (a.retry_after_s > 0) res.set_header("Retry-After", std::to_string(a.retry_after_s));
    if (a.http_status != 200 && a.error_is_json) {
      res.status = a.http_status;
      return res.set_content(a.body, "application/json");
    }
    if (a.http_status != 200) return send_error(res, a.http_status, a.body);
    res.set_content(a.body, "application/json");
  };
  // The version segment is accepted and ignored: lull picks the model.
  for (const char* path : {R"(/predictions/([^/]+))", R"(/predictions/([^/]+)/[^/]+)"}) {
    server_->Post(path, predict);
    server_->Put(path, predict);
  }
  // A body over the limit: httplib answers 413 itself before any handler runs.
  server_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      const int status = res.status;
      send_error(res, status, status == 413 ? "request body too large" : "HTTP " + std::to_string(status));
    }
  });
}

void Frontend::start() {
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
    if (port_ < 0) throw std::runtime_error(options_.host + ":0: cannot listen");
  } else {
    if (!server_->bind_to_port(options_.host, options_.port))
      throw std::runtime_error(options_.host + ":" + std::to_string(options_.port) + ": cannot listen (address in use?)");
    port_ = options_.port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void Frontend::stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

}  // namespace lull::serve
