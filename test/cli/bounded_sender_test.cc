// BoundedSender: at most N requests in flight, the rest wait first come,
// first sent, and are counted late (lull loadgen's connection pool). Time is
// a virtual clock the test moves: every wait is checked exactly.
#include "cli/bounded_sender.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using lull::net::HttpCallback;
using lull::net::HttpRequest;
using lull::net::HttpRequestId;
using lull::net::HttpResponse;

// Holds every request until the test answers it (oldest first).
class HeldTransport final : public lull::net::HttpTransport {
 public:
  HttpRequestId send(HttpRequest request, HttpCallback done) override {
    std::lock_guard<std::mutex> lock(mu_);
    urls_.push_back(request.url);
    held_.push_back(std::move(done));
    return urls_.size();
  }
  void cancel(HttpRequestId) override {}
  void post(std::function<void()> task) override { task(); }

  // Answers the oldest held request with `status`; false when none is held.
  // No Catch2 assertion here: the answering threads call it too.
  bool answer_one(int status) {
    HttpCallback done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (held_.empty()) return false;
      done = std::move(held_.front());
      held_.pop_front();
    }
    HttpResponse r;
    r.status = status;
    r.elapsed_us = 1000;
    done(std::move(r));
    return true;
  }
  std::vector<std::string> urls() {
    std::lock_guard<std::mutex> lock(mu_);
    return urls_;
  }
  std::size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.size();
  }

 private:
  std::mutex mu_;
  std::vector<std::string> urls_;
  std::deque<HttpCallback> held_;
};

// A virtual clock that another thread may move (the sender reads it from
// the thread in wait_all and from the transport's callbacks).
// It counts its reads, so the test can tell the drain has looked at it.
class TestClock final : public lull::core::Clock {
 public:
  std::int64_t now_us() const override {
    ++reads_;
    return now_us_.load();
  }
  void set_ms(std::int64_t ms) { now_us_.store(ms * 1000); }
  std::uint64_t reads() const { return reads_.load(); }

 private:
  std::atomic<std::int64_t> now_us_{0};
  mutable std::atomic<std::uint64_t> reads_{0};
};

// A bounded poll: whether the clock is read more than `n` times within 10 s.
bool read_more_than(const TestClock& clock, std::uint64_t n) {
  for (int i = 0; i < 10000; ++i) {
    if (clock.reads() > n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// A bounded poll: whether `flag` is set within 10 s.
bool set_within(const std::atomic<bool>& flag) {
  for (int i = 0; i < 10000; ++i) {
    if (flag) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

HttpRequest request(int i) {
  HttpRequest r;
  r.url = "http://x/" + std::to_string(i);
  return r;
}

}  // namespace

TEST_CASE("bounded sender: past N in flight, requests wait in order and are counted late", "[loadgen]") {
  HeldTransport transport;
  TestClock clock;
  std::vector<std::pair<int, std::int64_t>> done;  // (status, waited_us)
  lull::cli::BoundedSender sender(transport, 2, clock);
  for (int i = 0; i < 5; ++i) {
    clock.set_ms(i);  // sent at 0, 1, 2, 3, 4 ms
    sender.send(request(i), [&](HttpResponse r, std::int64_t waited_us) { done.emplace_back(r.status, waited_us); });
  }
  CHECK(transport.urls() == std::vector<std::string>{"http://x/0", "http://x/1"});
  CHECK(sender.counts().late == 3);
  CHECK(sender.wait_all(0, 0) == 5);

  clock.set_ms(20);
  CHECK(transport.answer_one(200));  // frees a connection: the oldest waiting one goes
  CHECK(transport.urls().size() == 3);
  CHECK(transport.urls().back() == "http://x/2");
  CHECK(transport.held() == 2);
  clock.set_ms(30);
  for (int i = 0; i < 4; ++i) CHECK(transport.answer_one(503));
  CHECK(transport.held() == 0);
  CHECK(transport.urls() ==
        std::vector<std::string>{"http://x/0", "http://x/1", "http://x/2", "http://x/3", "http://x/4"});
  CHECK(sender.wait_all(0, 0) == 0);
  REQUIRE(done.size() == 5);
  CHECK(done[0] == std::make_pair(200, std::int64_t{0}));  // sent at once
  CHECK(done[1] == std::make_pair(503, std::int64_t{0}));
  CHECK(done[2].second == 18000);  // sent at 2 ms, went at the first answer (20 ms)
  CHECK(done[3].second == 27000);  // sent at 3 ms, went at 30 ms
  CHECK(done[4].second == 26000);  // sent at 4 ms, went at 30 ms
  const auto counts = sender.counts();
  CHECK(counts.max_in_flight_seen == 2);
  CHECK(counts.max_wait_us == 27000);
  CHECK(counts.late == 3);
}

TEST_CASE("bounded sender: the drain waits while answers come, stops at a stall, drops what never went", "[loadgen]") {
  HeldTransport transport;
  TestClock clock;
  lull::cli::BoundedSender sender(transport, 1, clock);
  for (int i = 0; i < 4; ++i) sender.send(request(i), [](HttpResponse, std::int64_t) {});
  // Answers at 50 and 100 ms, then silence: a stall of 300 ms ends the drain
  // at 400 ms, not at its 10 s bound. The clock stops at 399 ms until the
  // drain has looked at it twice (so it did not end there), then moves to
  // 400 ms and no further: the drain ending shows it ended on the stall.
  std::atomic<bool> drained{false}, early{true};
  std::atomic<int> answered{0};  // checked here, not on the thread (Catch2 asserts on one thread)
  const std::uint64_t before = clock.reads();
  std::thread answers([&] {
    if (!read_more_than(clock, before)) return;  // the drain has begun (read its start)
    for (int ms : {50, 100}) {
      clock.set_ms(ms);
      answered += transport.answer_one(200) ? 1 : 0;
    }
    clock.set_ms(399);
    const std::uint64_t at_399 = clock.reads();
    early = !read_more_than(clock, at_399 + 1) || drained;
    clock.set_ms(400);
  });
  const std::size_t left = sender.wait_all(300, 10000);
  drained = true;
  answers.join();
  CHECK(answered == 2);
  CHECK(!early);
  CHECK(clock.now_us() == 400000);
  CHECK(left == 2);
  CHECK(sender.drop_waiting() == 1);  // the fourth never went
  CHECK(sender.wait_all(0, 0) == 1);  // the third is in flight
  CHECK(transport.answer_one(200));
  CHECK(sender.wait_all(0, 0) == 0);
  CHECK(transport.urls().size() == 3);
}

TEST_CASE("bounded sender: the drain's bound ends it while answers still come", "[loadgen]") {
  HeldTransport transport;
  TestClock clock;
  lull::cli::BoundedSender sender(transport, 1, clock);
  for (int i = 0; i < 30; ++i) sender.send(request(i), [](HttpResponse, std::int64_t) {});
  // One answer every 100 ms (never a 300 ms stall) up to 2 s, the drain's
  // bound; the clock then stays at 2 s until the drain has ended (or 10 s of
  // real time, after which it jumps past any stall so a wrong drain ends).
  std::atomic<bool> drained{false}, ended_at_bound{false};
  std::atomic<int> answered{0};
  const std::uint64_t before = clock.reads();
  std::thread answers([&] {
    if (!read_more_than(clock, before)) return;
    for (int ms = 100; ms <= 2000; ms += 100) {
      clock.set_ms(ms);
      answered += transport.answer_one(200) ? 1 : 0;
    }
    ended_at_bound = set_within(drained);
    clock.set_ms(60000);
  });
  const std::size_t left = sender.wait_all(300, 2000);
  drained = true;
  answers.join();
  CHECK(answered == 20);
  CHECK(ended_at_bound);
  CHECK(left >= 10);  // 20 answered by 2 s, the last one perhaps after the drain ended
  CHECK(left <= 11);
}

TEST_CASE("bounded sender: nothing waiting is sent once it is gone", "[loadgen]") {
  HeldTransport transport;
  int answered = 0;
  {
    lull::cli::BoundedSender sender(transport, 1);
    for (int i = 0; i < 3; ++i) sender.send(request(i), [&](HttpResponse, std::int64_t) { ++answered; });
    CHECK(sender.wait_all(10, 10) == 3);
  }
  CHECK(transport.answer_one(200));  // the one in flight completes; the two waiting never go
  CHECK(answered == 1);
  CHECK(transport.urls().size() == 1);
  CHECK(transport.held() == 0);
  CHECK_THROWS_AS(lull::cli::BoundedSender(transport, 0), std::invalid_argument);
}
