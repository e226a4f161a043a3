// BoundedSender (why: see bounded_sender.h).
#include "cli/bounded_sender.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

namespace lull::cli {

namespace {

// wait_all's longest real wait between two looks at the clock.
constexpr std::int64_t kClockLookUs = 5000;

}  // namespace

const core::Clock& BoundedSender::wall_clock() {
  static const core::WallClock clock;
  return clock;
}

struct BoundedSender::State {
  struct Waiting {
    net::HttpRequest request;
    Done done;
    std::int64_t since_us;
  };
  net::HttpTransport* transport;
  std::size_t max_in_flight;
  const core::Clock* clock;
  mutable std::mutex mu;
  std::condition_variable idle;
  std::size_t in_flight = 0;    // handed to the transport, not completed
  std::size_t outstanding = 0;  // in flight + waiting
  std::uint64_t completed = 0;
  std::int64_t last_completed_us = 0;  // on the clock, when `completed` last grew
  std::deque<Waiting> waiting;
  bool stopped = false;
  Counts counts;
};

BoundedSender::BoundedSender(net::HttpTransport& transport, std::size_t max_in_flight, const core::Clock& clock)
    : state_(std::make_shared<State>()) {
  if (max_in_flight == 0) throw std::invalid_argument("BoundedSender: max_in_flight must be at least 1");
  state_->transport = &transport;
  state_->max_in_flight = max_in_flight;
  state_->clock = &clock;
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
      state_->waiting.push_back({std::move(request), std::move(done), state_->clock->now_us()});
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
      state->last_completed_us = state->clock->now_us();
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
      const std::int64_t waited = state->clock->now_us() - next->since_us;
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->counts.max_wait_us = std::max(state->counts.max_wait_us, waited);
      }
      dispatch(state, std::move(next->request), std::move(next->done), waited);
    }
  });
}

std::size_t BoundedSender::wait_all(std::int64_t stall_ms, std::int64_t max_ms) {
  const core::Clock& clock = *state_->clock;
  const std::int64_t start_us = clock.now_us();
  const std::int64_t until_us = start_us + max_ms * 1000;
  std::unique_lock<std::mutex> lock(state_->mu);
  const std::uint64_t completed_before = state_->completed;
  for (;;) {
    if (state_->outstanding == 0) return 0;
    const std::int64_t progress_us =
        state_->completed == completed_before ? start_us : std::max(start_us, state_->last_completed_us);
    const std::int64_t deadline_us = std::min(until_us, progress_us + stall_ms * 1000);
    const std::int64_t now_us = clock.now_us();
    if (now_us >= deadline_us) return state_->outstanding;
    const std::uint64_t seen = state_->completed;
    state_->idle.wait_for(lock, std::chrono::microseconds(std::min(deadline_us - now_us, kClockLookUs)),
                          [&] { return state_->outstanding == 0 || state_->completed != seen; });
  }
}

BoundedSender::Counts BoundedSender::counts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->counts;
}

}  // namespace lull::cli
