// BoundedSender: at most N requests in flight, the rest wait first come,
// first sent, and are counted late (lull loadgen's connection pool).
#include "cli/bounded_sender.h"

#include <catch2/catch.hpp>

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

  // Answers the oldest held request with `status`.
  void answer_one(int status) {
    HttpCallback done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      REQUIRE(!held_.empty());
      done = std::move(held_.front());
      held_.pop_front();
    }
    HttpResponse r;
    r.status = status;
    r.elapsed_us = 1000;
    done(std::move(r));
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

HttpRequest request(int i) {
  HttpRequest r;
  r.url = "http://x/" + std::to_string(i);
  return r;
}

}  // namespace

TEST_CASE("bounded sender: past N in flight, requests wait in order and are counted late", "[loadgen]") {
  HeldTransport transport;
  std::vector<std::pair<int, std::int64_t>> done;  // (status, waited_us)
  lull::cli::BoundedSender sender(transport, 2);
  for (int i = 0; i < 5; ++i)
    sender.send(request(i), [&](HttpResponse r, std::int64_t waited_us) { done.emplace_back(r.status, waited_us); });
  CHECK(transport.urls() == std::vector<std::string>{"http://x/0", "http://x/1"});
  CHECK(sender.counts().late == 3);
  CHECK(sender.wait_all(0, 0) == 5);

  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  transport.answer_one(200);  // frees a connection: the oldest waiting one goes
  CHECK(transport.urls().size() == 3);
  CHECK(transport.urls().back() == "http://x/2");
  CHECK(transport.held() == 2);
  while (transport.held() > 0) transport.answer_one(503);
  CHECK(transport.urls() ==
        std::vector<std::string>{"http://x/0", "http://x/1", "http://x/2", "http://x/3", "http://x/4"});
  CHECK(sender.wait_all(0, 0) == 0);
  REQUIRE(done.size() == 5);
  CHECK(done[0] == std::make_pair(200, std::int64_t{0}));  // sent at once
  CHECK(done[2].second >= 20000);                          // waited for the first answer
  const auto counts = sender.counts();
  CHECK(counts.max_in_flight_seen == 2);
  CHECK(counts.max_wait_us >= 20000);
  CHECK(counts.late == 3);
}

TEST_CASE("bounded sender: the drain waits while answers come, stops at a stall, drops what never went", "[loadgen]") {
  HeldTransport transport;
  lull::cli::BoundedSender sender(transport, 1);
  for (int i = 0; i < 4; ++i) sender.send(request(i), [](HttpResponse, std::int64_t) {});
  std::thread answers([&] {  // one answer every 50 ms, then silence
    for (int i = 0; i < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      transport.answer_one(200);
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  // A stall of 300 ms ends it: after the two answers (~100 ms), not at the 10 s bound.
  CHECK(sender.wait_all(300, 10000) == 2);
  const auto waited = std::chrono::steady_clock::now() - t0;
  answers.join();
  CHECK(waited >= std::chrono::milliseconds(350));
  CHECK(waited < std::chrono::seconds(5));
  CHECK(sender.drop_waiting() == 1);  // the fourth never went
  CHECK(sender.wait_all(0, 0) == 1);  // the third is in flight
  transport.answer_one(200);
  CHECK(sender.wait_all(0, 0) == 0);
  CHECK(transport.urls().size() == 3);
}

TEST_CASE("bounded sender: nothing waiting is sent once it is gone", "[loadgen]") {
  HeldTransport transport;
  int answered = 0;
  {
    lull::cli::BoundedSender sender(transport, 1);
    for (int i = 0; i < 3; ++i) sender.send(request(i), [&](HttpResponse, std::int64_t) { ++answered; });
    CHECK(sender.wait_all(10, 10) == 3);
  }
  transport.answer_one(200);  // the one in flight completes; the two waiting never go
  CHECK(answered == 1);
  CHECK(transport.urls().size() == 1);
  CHECK(transport.held() == 0);
  CHECK_THROWS_AS(lull::cli::BoundedSender(transport, 0), std::invalid_argument);
}
