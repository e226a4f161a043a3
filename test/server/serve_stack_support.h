#pragma once
// The serve layer assembled as `lull serve` assembles it (TorchServe backend
// as backend and health source, session, front end on a free port) against
// two stand-in model servers running the fake models "small" and "big" of
// tiny_session_table: what the tests through real sockets share.
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "test/support/model_server_process.h"
#include "test/support/session_test_support.h"
#include "runtime/core/clock.h"
#include "runtime/frontend/frontend.h"
#include "runtime/net/http_client.h"
#include "runtime/session/serve_session.h"
#include "runtime/upstream/torchserve/torchserve_backend.h"
#include "runtime/upstream/v2/v2_wire.h"

namespace lull::serve::testing {

inline torchserve::TorchServeOptions fast_health_checks() {
  torchserve::TorchServeOptions o;
  o.health_interval_ms = 100;
  o.health_timeout_ms = 300;
  return o;
}

// How the stand-ins speak: TorchServe's API with lull's batch contract (a
// per-input error for a bad input), or only the Open Inference Protocol with
// a bad input refusing the whole request, as KServe, MLServer and Triton do.
enum class StackWire { kTorchServe, kV2WholeBatchRefusal };

inline std::vector<std::string> stand_in_args(StackWire w) {
  std::vector<std::string> args = {"--fake", "small:5:1", "--fake", "big:20:2"};
  if (w == StackWire::kV2WholeBatchRefusal) args.insert(args.end(), {"--only-v2", "--whole-batch-refusal"});
  return args;
}

struct ServeStack {
  explicit ServeStack(StackWire w = StackWire::kTorchServe)
      : s0(stand_in_args(w)),
        s1(stand_in_args(w)),
        table(tiny_session_table(2)),
        backend({{s0.url(), s0.url()}, {s1.url(), s1.url()}}, {"small", "big"}, options(w)),
        session(table, backend, backend, clock),
        workers_up_at_start(backend.start()),
        fe(session, frontend_options()) {
    fe.start();
    base = "http://127.0.0.1:" + std::to_string(fe.port());
  }
  ~ServeStack() {
    session.shutdown();
    fe.stop();
    backend.stop();  // its threads call into the session: stopped before it goes
  }
  torchserve::TorchServeOptions options(StackWire w) {
    torchserve::TorchServeOptions o = fast_health_checks();
    if (w == StackWire::kV2WholeBatchRefusal) o.wire = &v2_wire;
    return o;
  }
  static frontend::FrontendOptions frontend_options() {
    frontend::FrontendOptions fo;
    fo.port = 0;
    fo.task = "classify";
    return fo;
  }
  // POSTs `body` to the front end's task through `client`, not waiting.
  std::future<net::HttpResponse> post(net::HttpClient& client, std::string body) const {
    auto p = std::make_shared<std::promise<net::HttpResponse>>();
    auto answer = p->get_future();
    net::HttpRequest r;
    r.method = "POST";
    r.url = base + "/predictions/classify";
    r.body = std::move(body);
    r.timeout_ms = 20000;
    client.send(r, [p](net::HttpResponse resp) { p->set_value(std::move(resp)); });
    return answer;
  }

  v2::V2Wire v2_wire;  // before the backend, which keeps a reference
  ModelServerProcess s0, s1;
  core::PolicyTable table;
  core::WallClock clock;
  torchserve::TorchServeBackend backend;
  session::ServeSession session;
  int workers_up_at_start;
  frontend::Frontend fe;
  std::string base;
};

}  // namespace lull::serve::testing
