// BoundedSender (why: see bounded_sender.h).
#include "cli/bounded_sender.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

namespace lull::cli {

namespace {

std::int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct BoundedSender::State {
  struct Waiting {
    net::HttpRequest request;
    Done done;
    std::int64_t since_us;
  };
  net::HttpTransport* transport;
  std::size_t max_in_flight;
  mutable std::mutex mu;
  std::condition_variable idle;
  std::size_t in_flight = 0;    // handed to the transport, not completed
  std::size_t outstanding = 0;  // in flight + waiting
  std::uint64_t completed = 0;
  std::deque<Waiting> waiting;
  bool stopped = false;
  Counts counts;
};

BoundedSender::BoundedSender(net::HttpTransport& transport, std::size_t max_in_flight)
    : state_(std::make_shared<State>()) {
  if (max_in_flight == 0) throw std::invalid_argument("BoundedSender: max_in_flight must be at least 1");
  state_->transport = &transport;
  state_->max_in_flight = max_in_flight;
}

BoundedSender::~BoundedSender() {
  drop_waiting();
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stopped = true;
}

std::size_t BoundedSender::drop_waiting() {
  std::lock_guard<std::mutex> lock(state_->mu);
  const std::size_t n = state_->waiting.size();
  state_->outstanding -= n;
  state_->waiting.clear();
  return n;
}

void BoundedSender::send(net::HttpRequest request, Done done) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    ++state_->outstanding;
    if (state_->in_flight >= state_->max_in_flight) {
      ++state_->counts.late;
      state_->waiting.push_back({std::move(request), std::move(done), steady_us()});
      return;
    }
    ++state_->in_flight;
    state_->counts.max_in_flight_seen = std::max(state_->counts.max_in_flight_seen, state_->in_flight);
  }
  dispatch(state_, std::move(request), std::move(done), 0);
}

void BoundedSender::dispatch(const std::shared_ptr<State>& state, net::HttpRequest request, Done done,
                             std::int64_t waited_us) {
  state->transport->send(std::move(request), [state, done = std::move(done), waited_us](net::HttpResponse r) {
    done(std::move(r), waited_us);
    std::optional<State::Waiting> next;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      --state->outstanding;
      ++state->completed;
      if (!state->stopped && !state->waiting.empty()) {
        next = std::move(state->waiting.front());
        state->waiting.pop_front();
      } else {
        --state->in_flight;
      }
      state->idle.notify_all();
    }
    // The connection this one held goes to the oldest waiting request.
    if (next) {
      const std::int64_t waited = steady_us() - next->since_us;
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->counts.max_wait_us = std::max(state->counts.max_wait_us, waited);
      }
      dispatch(state, std::move(next->request), std::move(next->done), waited);
    }
  });
}

std::size_t BoundedSender::wait_all(std::int64_t stall_ms, std::int64_t max_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
  std::unique_lock<std::mutex> lock(state_->mu);
  for (;;) {
    const std::uint64_t seen = state_->completed;
    const auto stall_until = std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(stall_ms));
    state_->idle.wait_until(lock, stall_until, [&] { return state_->outstanding == 0 || state_->completed != seen; });
    if (state_->outstanding == 0 || state_->completed == seen || std::chrono::steady_clock::now() >= until)
      return state_->outstanding;
  }
}

BoundedSender::Counts BoundedSender::counts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->counts;
}

}  // namespace lull::cli
