// The front end's Open Inference Protocol (KServe v2) routes, beside
// TorchServe's (frontend.h lists them; docs/operators-guide.md says what of the
// protocol is implemented). The task stands for the model: a client asks
// /v2/models/{task}/infer and the answer's model_name is the model that
// served the query. Versions in the path are accepted and ignored (lull
// picks the model), as on /predictions/{task}/{version}.
#include <chrono>
#include <string>
#include <vector>

#include "runtime/frontend/build_info.h"
#include "runtime/frontend/frontend.h"
#include "runtime/frontend/v2_front_codec.h"
#include "runtime/net/json_value.h"

namespace lull::frontend {

namespace {

net::ServerResponse v2_response(int status, std::string body) {
  net::ServerResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

net::ServerResponse v2_error(int status, const std::string& message) {
  return v2_response(status, v2_error_body(message));
}

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

void Frontend::route_v2(net::ServerRequest req, net::Respond respond) {
  const std::vector<std::string> p = path_parts(req.target);  // p[0] == "v2"
  const bool get = req.method == "GET";
  const auto only_get = [&](const char* what) { return respond(v2_error(405, std::string("use GET ") + what)); };
  if (p.size() == 1 || (p.size() == 2 && p[1].empty())) {  // /v2, /v2/: server metadata
    if (!get) return only_get("/v2");
    return respond(v2_response(
        200, "{\"name\":\"lull\",\"version\":" + net::json_quoted(build_version()) + ",\"extensions\":[]}"));
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
  const std::string name = net::json_quoted(options_.task);
  if (action == "ready") {
    const bool ready = service_.healthy();
    return respond(
        v2_response(ready ? 200 : 503, "{\"name\":" + name + ",\"ready\":" + (ready ? "true" : "false") + "}"));
  }
  // Model metadata: the task as one model taking one BYTES element (tensors
  // are accepted too and passed on as JSON: v2_front_codec.h).
  respond(v2_response(200,
                      "{\"name\":" + name +
                          ",\"platform\":\"lull_policy\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"BYTES\","
                          "\"shape\":[1]}],\"outputs\":[{\"name\":\"output\",\"datatype\":\"BYTES\",\"shape\":[1]}]}"));
}

void Frontend::infer_v2(net::ServerRequest req, net::Respond respond) {
  V2InferRequest request;
  std::string error;
  if (!parse_v2_infer_request(req.body, &request, &error)) return respond(v2_error(400, error));
  const auto arrived = req.arrived;
  const auto waited_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - arrived).count();
  std::string input = std::move(request.input);
  request.input.clear();
  service_.serve_class_async(
      req.query_class, std::move(input), waited_us,
      [arrived, task = options_.task, request = std::move(request), respond = std::move(respond)](Answer a) {
        net::ServerResponse res =
            a.http_status == 200 ? v2_response(200, v2_infer_response(a.model, task, request, a.body))
                                 : v2_error(a.http_status, a.error_is_json ? torchserve_error_message(a.body) : a.body);
        add_answer_headers(a, arrived, &res);
        respond(std::move(res));
      });
}

}  // namespace lull::frontend
