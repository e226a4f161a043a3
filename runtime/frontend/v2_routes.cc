// The front end's Open Inference Protocol (KServe v2) routes, beside
// TorchServe's (frontend.h lists them; docs/operators-guide.md says what of the
// protocol is implemented). The task stands for the model: a client asks
// /v2/models/{task}/infer and the answer's model_name is the model that
// served the query. Versions in the path are accepted and ignored (lull
// picks the model), as on /predictions/{task}/{version}.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/frontend/build_info.h"
#include "runtime/frontend/frontend.h"
#include "runtime/frontend/v2_front_codec.h"
#include "runtime/net/content_encoding.h"
#include "runtime/net/json_value.h"

namespace lull::frontend {

using net::json_quoted;
using net::Respond;
using net::ServerRequest;
using net::ServerResponse;

namespace {

ServerResponse v2_response(int status, std::string body) {
  ServerResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

ServerResponse v2_error(int status, const std::string& message) { return v2_response(status, v2_error_body(message)); }

std::vector<std::string> path_parts(const std::string& target) {
  std::vector<std::string> parts;
  std::size_t start = 1;  // after the leading '/'
  while (start <= target.size()) {
    const auto slash = target.find('/', start);
    const auto end = slash == std::string::npos ? target.size() : slash;
    parts.push_back(target.substr(start, end - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

}  // namespace

void Frontend::route_v2(ServerRequest req, Respond respond) {
  const std::vector<std::string> p = path_parts(req.target);  // p[0] == "v2"
  const bool get = req.method == "GET";
  const auto only_get = [&](const char* what) { return respond(v2_error(405, std::string("use GET ") + what)); };
  if (p.size() == 1 || (p.size() == 2 && p[1].empty())) {  // /v2, /v2/: server metadata
    if (!get) return only_get("/v2");
    return respond(v2_response(200, "{\"name\":\"lull\",\"version\":" + json_quoted(build_version()) +
                                        ",\"extensions\":[\"binary_tensor_data\"]}"));
  }
  if (p.size() == 3 && p[1] == "health" && (p[2] == "live" || p[2] == "ready")) {
    if (!get) return only_get("on /v2/health");
    if (p[2] == "live") return respond(v2_response(200, "{\"live\":true}"));
    const bool ready = service_.healthy();
    return respond(v2_response(ready ? 200 : 503, ready ? "{\"ready\":true}" : "{\"ready\":false}"));
  }
  // /v2/models/{task}[/versions/{v}][/ready|/infer]
  if (p.size() < 3 || p[1] != "models" || p[2].empty()) return respond(v2_error(404, "no such path: " + req.target));
  std::size_t next = 3;
  if (p.size() > next && p[next] == "versions") {
    if (p.size() == next + 1 || p[next + 1].empty()) return respond(v2_error(404, "no such path: " + req.target));
    next += 2;
  }
  const std::string action = p.size() > next ? p[next] : "";
  if (p.size() > next + 1 || (p.size() == next + 1 && action != "ready" && action != "infer"))
    return respond(v2_error(404, "no such path: " + req.target));
  if (p[2] != options_.task)
    return respond(v2_error(404, "unknown model '" + p[2] + "'; this server serves the task '" + options_.task +
                                     "' (lull picks its model)"));
  if (action == "infer") {
    if (req.method != "POST") return respond(v2_error(405, "use POST on .../infer"));
    return infer_v2(std::move(req), std::move(respond));
  }
  if (!get) return only_get("on /v2/models/{task}");
  const std::string name = json_quoted(options_.task);
  if (action == "ready") {
    const bool ready = service_.healthy();
    return respond(
        v2_response(ready ? 200 : 503, "{\"name\":" + name + ",\"ready\":" + (ready ? "true" : "false") + "}"));
  }
  // Model metadata: the task as one model taking BYTES elements, a query
  // each, [-1] for the batch (tensors are accepted too, a query per row:
  // v2_front_codec.h).
  respond(v2_response(
      200, "{\"name\":" + name +
               ",\"platform\":\"lull_policy\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"BYTES\","
               "\"shape\":[-1]}],\"outputs\":[{\"name\":\"output\",\"datatype\":\"BYTES\",\"shape\":[-1]}]}"));
}

namespace {

// The rows of one client request as they are answered, each by its own query.
struct RowAnswers {
  std::mutex mu;
  std::vector<Answer> answers;
  size_t left = 0;
};

}  // namespace

void Frontend::infer_v2(ServerRequest req, Respond respond) {
  std::string error;
  if (!req.content_encoding.empty()) {
    std::string inflated;
    switch (net::inflate_body(req.content_encoding, req.body, options_.max_body_bytes, &inflated, &error)) {
      case net::InflateResult::kOk:
        req.body = std::move(inflated);
        break;
      case net::InflateResult::kUnsupported:
        return respond(v2_error(415, error));
      case net::InflateResult::kTooLarge:
        return respond(v2_error(413, error));
      case net::InflateResult::kCorrupt:
        return respond(v2_error(400, error));
    }
  }
  if (req.body.size() > kInlineDecodeBytes) {
    const std::string client = req.client;
    return lane_.post(client, [this, req = std::move(req), respond = std::move(respond)](bool run) mutable {
      if (!run) return respond(v2_error(503, "the server is stopping"));
      decode_and_serve_v2(std::move(req), std::move(respond));
    });
  }
  decode_and_serve_v2(std::move(req), std::move(respond));
}

void Frontend::decode_and_serve_v2(ServerRequest req, Respond respond) {
  V2InferRequest request;
  std::string error;
  if (!parse_v2_infer_request(req.body, &request, &error, req.inference_header_length))
    return respond(v2_error(400, error));
  req.body.clear();
  req.body.shrink_to_fit();
  const auto arrived = req.arrived;
  const auto waited_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - arrived).count();
  std::vector<std::string> queries = std::move(request.queries);
  request.queries.clear();
  if (queries.size() == 1) {
    service_.serve_class_async(
        req.query_class, std::move(queries[0]), waited_us,
        [arrived, task = options_.task, request = std::move(request), respond = std::move(respond)](Answer a) {
          ServerResponse res;
          if (a.http_status == 200) {
            std::string body = v2_infer_response(a.model, task, request, a.body), why;
            res = select_v2_outputs(request, &body, &why) ? v2_response(200, std::move(body)) : v2_error(400, why);
          } else {
            res = v2_error(a.http_status, a.error_is_json ? torchserve_error_message(a.body) : a.body);
          }
          add_answer_headers(a, arrived, &res);
          respond(std::move(res));
        });
    return;
  }
  // A client batch [B, ...]: B queries scheduled like any other, answered
  // together in row order once the last is in.
  auto rows = std::make_shared<RowAnswers>();
  rows->answers.resize(queries.size());
  rows->left = queries.size();
  auto shared_request = std::make_shared<const V2InferRequest>(std::move(request));
  auto shared_respond = std::make_shared<Respond>(std::move(respond));
  for (size_t r = 0; r < queries.size(); ++r) {
    service_.serve_class_async(
        req.query_class, std::move(queries[r]), waited_us,
        [r, rows, arrived, task = options_.task, shared_request, shared_respond](Answer a) {
          {
            std::lock_guard<std::mutex> lock(rows->mu);
            rows->answers[r] = std::move(a);
            if (--rows->left > 0) return;
          }
          const std::vector<Answer>& all = rows->answers;
          ServerResponse res;
          const Answer* failed = nullptr;
          for (const Answer& x : all)
            if (x.http_status != 200) {
              failed = &x;
              break;
            }
          if (failed) {
            // The request fails as a whole (the protocol answers a request, not rows), naming the row.
            const size_t row = static_cast<size_t>(failed - all.data());
            res = v2_error(failed->http_status,
                           "row " + std::to_string(row) + ": " +
                               (failed->error_is_json ? torchserve_error_message(failed->body) : failed->body));
            add_answer_headers(*failed, arrived, &res);
          } else {
            std::vector<std::string> models, predictions;
            for (const Answer& x : all) {
              models.push_back(x.model);
              predictions.push_back(x.body);
            }
            std::string body, why;
            if (!v2_infer_batch_response(models, task, *shared_request, predictions, &body, &why))
              res = v2_error(502, why);
            else if (!select_v2_outputs(*shared_request, &body, &why))
              res = v2_error(400, why);
            else
              res = v2_response(200, std::move(body));
            add_answer_headers(all.front(), arrived, &res);
          }
          (*shared_respond)(std::move(res));
        });
  }
}

}  // namespace lull::frontend
