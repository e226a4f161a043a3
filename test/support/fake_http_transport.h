#pragma once
// An in-memory HttpTransport for tests (after ninja's VirtualFileSystem and
// FakeCommandRunner): no sockets, no servers. The test says how each route
// answers (a function of the request, so it can count, fail the first N
// times, or look at the body), every request is recorded for the test to
// check, and a request no route matches gets the transport error
// "Connection refused", as from a closed port, and an answer over the
// request's max_response_bytes fails as it does over libcurl. Answers come on the fake's own
// thread, as from the real transport's loop, so callers that wait on a
// callback (fetch(), futures) behave as they do over libcurl.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/net/http_transport.h"

namespace lull::test {

class FakeHttpTransport final : public net::HttpTransport {
 public:
  using Handler = std::function<net::HttpResponse(const net::HttpRequest&)>;

  FakeHttpTransport() : loop_([this] { run(); }) {}
  ~FakeHttpTransport() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    loop_.join();
  }

  // Requests "METHOD URL" (URL without its query string) answer with `handler`.
  void route(const std::string& method, const std::string& url, Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_[method + " " + url] = std::move(handler);
  }
  // Requests no route matches answer with `handler` (a whole fake server:
  // fake_kubernetes_api.h) instead of "Connection refused".
  void fallback(Handler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    fallback_ = std::move(handler);
  }
  // Waits, at most `limit`, until every request sent so far is answered and
  // its callback has returned (requests those callbacks send included); true
  // if so. Tests on a virtual clock settle each step with it.
  bool wait_idle(std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    std::unique_lock<std::mutex> lock(mu_);
    return idle_.wait_for(lock, limit, [this] { return queue_.empty() && !running_; });
  }
  // Every request so far, in the order sent.
  std::vector<net::HttpRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }

  net::HttpRequestId send(net::HttpRequest request, net::HttpCallback done) override {
    std::lock_guard<std::mutex> lock(mu_);
    const net::HttpRequestId id = ++next_id_;
    sent_.push_back(request);
    queue_.push_back([this, request = std::move(request), done = std::move(done)] { done(answer(request)); });
    wake_.notify_all();
    return id;
  }
  void cancel(net::HttpRequestId) override {}  // every request is answered at once
  void post(std::function<void()> task) override {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    wake_.notify_all();
  }

  // A response with this status and body.
  static net::HttpResponse reply(int status, std::string body = "") {
    net::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  }

 private:
  net::HttpResponse answer(const net::HttpRequest& request) {
    Handler handler;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto it = routes_.find(request.method + " " + request.url.substr(0, request.url.find('?')));
      handler = it != routes_.end() ? it->second : fallback_;
    }
    if (!handler) {
      net::HttpResponse refused;
      refused.error = "Connection refused";
      return refused;
    }
    net::HttpResponse r = handler(request);
    if (request.max_response_bytes > 0 && static_cast<std::int64_t>(r.body.size()) > request.max_response_bytes) {
      r = net::HttpResponse{};  // as libcurl's transport ends it (curl_http_client.cc)
      r.too_large = true;
      r.error = net::describe_response_cap(request.max_response_bytes);
    }
    return r;
  }
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      auto task = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      lock.unlock();
      task();
      lock.lock();
      running_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  bool running_ = false;  // a task is being run (outside mu_)
  std::map<std::string, Handler> routes_;
  Handler fallback_;
  std::vector<net::HttpRequest> sent_;
  std::deque<std::function<void()>> queue_;
  net::HttpRequestId next_id_ = 0;
  bool stop_ = false;
  std::thread loop_;  // last: starts once everything above exists
};

}  // namespace lull::test
