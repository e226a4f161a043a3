#pragma once
// An HttpTransport whose calls a stop can cut short: interrupt() completes
// every request in flight through it as cancelled and every later one at
// once, so a thread blocked in fetch() (a model server's management API
// loading a model for up to its 120 s timeout) returns within the
// transport's next turn instead of when the load ends. The stopping server
// calls it, as KubernetesApi::interrupt does for the pool's API calls.
#include <memory>
#include <mutex>
#include <set>

#include "runtime/net/http_transport.h"

namespace lull::net {

class InterruptibleTransport final : public HttpTransport {
 public:
  explicit InterruptibleTransport(HttpTransport& inner) : inner_(inner) {}  // `inner` outlives this
  HttpRequestId send(HttpRequest request, HttpCallback done) override;
  void cancel(HttpRequestId id) override { inner_.cancel(id); }
  void post(std::function<void()> task) override { inner_.post(std::move(task)); }
  // Any thread, idempotent: cancels what is in flight and everything sent later.
  void interrupt();

 private:
  // Shared with the callbacks, which may run after this is gone (the inner
  // transport's destructor completes what is left).
  struct State {
    std::mutex mu;
    bool interrupted = false;
    std::set<HttpRequestId> in_flight;
  };
  HttpTransport& inner_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace lull::net
