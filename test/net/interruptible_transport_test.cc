// A transport a stop can cut short (runtime/net/interruptible_transport.h):
// a call in flight and every later one complete as cancelled, at once.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/net/interruptible_transport.h"

using namespace lull::net;

namespace {

// Answers nothing until cancelled (a model load that takes its time), on a
// thread of its own as a transport's callbacks run.
class SilentTransport final : public HttpTransport {
 public:
  HttpRequestId send(HttpRequest, HttpCallback done) override {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_[++next_] = std::move(done);
    return next_;
  }
  void cancel(HttpRequestId id) override {
    HttpCallback done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = waiting_.find(id);
      if (it == waiting_.end()) return;
      done = std::move(it->second);
      waiting_.erase(it);
      ++cancels_;
    }
    post([done] {
      HttpResponse r;
      r.cancelled = true;
      done(r);
    });
  }
  void post(std::function<void()> task) override {
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back(std::move(task));
  }
  ~SilentTransport() override {
    for (auto& t : threads_) t.join();
  }
  int cancels() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancels_;
  }

 private:
  std::mutex mu_;
  std::map<HttpRequestId, HttpCallback> waiting_;
  HttpRequestId next_ = 0;
  int cancels_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE("an interrupted transport cancels the call in flight and every later one", "[net][stop]") {
  SilentTransport inner;
  InterruptibleTransport calls(inner);
  HttpRequest load;
  load.method = "POST";
  load.url = "http://127.0.0.1:1/models?url=m.mar&synchronous=true";
  auto blocked = std::async(std::launch::async, [&] { return calls.fetch(load); });
  // Bounded: the fetch is blocked until the interrupt, which may come before or after its send.
  CHECK(blocked.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
  calls.interrupt();
  REQUIRE(blocked.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  const HttpResponse r = blocked.get();
  CHECK(r.cancelled);
  CHECK_FALSE(r.ok());
  const HttpResponse later = calls.fetch(load);  // never sent
  CHECK(later.cancelled);
  CHECK(later.error.find("stopping") != std::string::npos);
  CHECK(inner.cancels() <= 1);
  calls.interrupt();  // idempotent
}
