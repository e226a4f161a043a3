// A transport a stop can cut short (why: interruptible_transport.h).
#include "runtime/net/interruptible_transport.h"

#include <utility>
#include <vector>

namespace lull::net {

HttpRequestId InterruptibleTransport::send(HttpRequest request, HttpCallback done) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->interrupted) {
      inner_.post([done = std::move(done)] {
        HttpResponse r;
        r.cancelled = true;
        r.error = "cancelled (lull is stopping)";
        done(std::move(r));
      });
      return 0;
    }
  }
  // The id is known only once send() returns, and the answer may come
  // first: whichever of the two is second settles the bookkeeping.
  struct Call {
    HttpRequestId id = 0;
    bool finished = false;
  };
  auto call = std::make_shared<Call>();
  const HttpRequestId id =
      inner_.send(std::move(request), [state = state_, call, done = std::move(done)](HttpResponse r) {
        {
          std::lock_guard<std::mutex> lock(state->mu);
          call->finished = true;
          if (call->id) state->in_flight.erase(call->id);
        }
        done(std::move(r));
      });
  bool cancel_now = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!call->finished) {
      call->id = id;
      state_->in_flight.insert(id);
      cancel_now = state_->interrupted;  // interrupt() came between the check above and here
    }
  }
  if (cancel_now) inner_.cancel(id);
  return id;
}

void InterruptibleTransport::interrupt() {
  std::vector<HttpRequestId> ids;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->interrupted = true;
    ids.assign(state_->in_flight.begin(), state_->in_flight.end());
  }
  for (const HttpRequestId id : ids) inner_.cancel(id);
}

}  // namespace lull::net
