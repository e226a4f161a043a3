#pragma once
// Open-loop sending over a bounded number of connections (lull loadgen).
// Each request in flight holds one connection of the transport's keep-alive
// pool, so at most `max_in_flight` are open at once, whatever the rate: an
// unbounded generator against a server that stops answering grows one socket
// per request until the descriptor limit stops it. A request whose send time
// comes while all of them are busy is not dropped and not silently delayed:
// it waits (first come, first sent) for the next one to complete, is counted
// late, and its wait is handed to its callback, so its latency can be
// measured from its scheduled time. Waits and the drain's bounds are read on
// a core::Clock (the wall clock in lull loadgen; a test's virtual one).
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "runtime/core/clock.h"
#include "runtime/net/http_transport.h"

namespace lull::cli {

class BoundedSender {
 public:
  // `waited_us`: from send() to the transport's send (0 when it went at once).
  using Done = std::function<void(net::HttpResponse response, std::int64_t waited_us)>;

  // `clock` must outlive the sender and the transport's callbacks.
  BoundedSender(net::HttpTransport& transport, std::size_t max_in_flight, const core::Clock& clock = wall_clock());
  // Stops sending what still waits; what is in flight completes through the
  // transport (destroy the transport after this, as its callbacks own no
  // reference to it).
  ~BoundedSender();
  BoundedSender(const BoundedSender&) = delete;
  BoundedSender& operator=(const BoundedSender&) = delete;

  void send(net::HttpRequest request, Done done);
  // Waits until every request sent so far has completed, or no request has
  // completed for `stall_ms` (since the call or the last completion, on the
  // clock), or `max_ms` passes; returns how many have not (in flight or
  // still waiting). The clock is looked at every few milliseconds, so a
  // virtual one that moves without a completion is seen too.
  std::size_t wait_all(std::int64_t stall_ms, std::int64_t max_ms);
  // Drops the requests still waiting for a connection (never sent: the
  // server never saw them); returns how many.
  std::size_t drop_waiting();

  struct Counts {
    std::size_t late = 0;  // waited for a free connection
    std::int64_t max_wait_us = 0;
    std::size_t max_in_flight_seen = 0;
  };
  Counts counts() const;

 private:
  static const core::Clock& wall_clock();
  struct State;
  static void dispatch(const std::shared_ptr<State>& state, net::HttpRequest request, Done done,
                       std::int64_t waited_us);
  std::shared_ptr<State> state_;
};

}  // namespace lull::cli
