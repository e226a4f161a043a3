// libFuzzer target: the HTTP server's connection lifecycle. Each
// input is a script of moves on up to 6 loopback connections to one front
// end with a connection cap of 3 and 150 ms timeouts, so connections are shed,
// refused, timed out and answered late while clients send, pause and leave:
// two bytes per move, the first picks the move and the connection, the second
// its argument:
//   connect (replacing that connection), send the next bytes of a canned
//   request stream (two pipelined POSTs, one chunked), send the next input
//   bytes raw, pause up to 20 ms, close (abruptly, with a reset, for odd
//   arguments), shut the write side, read what has arrived.
// Half the queries are answered at once, half a few ms later from another
// thread (often after the client left). Checks: never a crash or a
// sanitizer report; whatever a connection reads starts as an HTTP response;
// after the script, with every connection closed, /ping answers 200 within
// 10 s (the server still serves and frees its slots).
#include <poll.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/frontend/frontend.h"
#include "test/fuzz/fuzz_support.h"
#include "test/fuzz/loopback_socket.h"

namespace {

using lull::fuzz::finding;

class LateService final : public lull::frontend::QueryService {
 public:
  LateService() : worker_([this] { run(); }) { worker_.detach(); }  // lives as long as the process
  lull::frontend::Answer serve(std::string input) override {
    lull::frontend::Answer a;
    a.body = "{\"len\":" + std::to_string(input.size()) + "}";
    return a;
  }
  void serve_async(std::string input, std::int64_t, std::function<void(lull::frontend::Answer)> done) override {
    if (input.size() % 2 == 0) return done(serve(std::move(input)));
    std::lock_guard<std::mutex> lock(mu_);
    late_.push_back([this, done, input = std::move(input)]() mutable { done(serve(std::move(input))); });
    cv_.notify_one();
  }
  std::string metrics_text() override { return ""; }
  bool healthy() override { return true; }

 private:
  void run() {
    for (;;) {
      std::vector<std::function<void()>> due;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !late_.empty(); });
        due.swap(late_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      for (auto& d : due) d();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> late_;
  std::thread worker_;
};

lull::frontend::Frontend& frontend() {
  static LateService* service = new LateService;  // never destroyed: its thread runs to the end
  static auto fe = [] {
    lull::frontend::FrontendOptions o;
    o.port = 0;
    o.task = "t";
    o.max_body_bytes = 256;
    o.io_threads = 2;
    o.max_connections = 3;
    o.header_timeout_ms = 150;
    o.body_timeout_ms = 150;
    o.idle_timeout_ms = 150;
    auto f = std::make_unique<lull::frontend::Frontend>(*service, o);
    f->start();
    return f;
  }();
  return *fe;
}

const std::string& canned() {
  static const std::string s =
      "POST /predictions/t HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
      "POST /predictions/t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n"
      "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  return s;
}

struct Client {
  int fd = -1;
  std::size_t sent = 0;  // of canned()
  bool read_any = false;

  void close(bool reset) {
    if (fd < 0) return;
    if (reset) {
      linger l{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    ::close(fd);
    fd = -1;
  }
  void send(const char* bytes, std::size_t n) {
    if (fd >= 0 && n > 0) (void)::send(fd, bytes, n, MSG_NOSIGNAL | MSG_DONTWAIT);  // the server may have closed
  }
  void read_available() {
    if (fd < 0) return;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return;
    if (!read_any && (n < 7 || std::string(buf, 7) != "HTTP/1."))
      finding("a connection read bytes that are not an HTTP response");
    read_any = true;
  }
};

bool ping_answers() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    const int fd = lull::fuzz::connect_loopback(frontend().port());
    static const std::string ping = "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    (void)::send(fd, ping.data(), ping.size(), MSG_NOSIGNAL);
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (n > 12 && std::string(buf, 12) == "HTTP/1.1 200") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // 503 at the cap while slots free up
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  Client clients[6];
  std::size_t raw_at = 0;
  const std::size_t moves = std::min<std::size_t>(size / 2, 48);
  for (std::size_t i = 0; i < moves; ++i) {
    const std::uint8_t pick = data[2 * i], arg = data[2 * i + 1];
    Client& c = clients[(pick >> 3) % 6];
    switch (pick % 7) {
      case 0:
        c.close(false);
        c = Client{};
        c.fd = lull::fuzz::connect_loopback(frontend().port());
        break;
      case 1: {
        const std::size_t n = std::min<std::size_t>(1 + arg % 64, canned().size() - c.sent);
        c.send(canned().data() + c.sent, n);
        c.sent += n;
        break;
      }
      case 2: {
        const std::size_t n = std::min<std::size_t>(arg % 16, size - raw_at);
        c.send(reinterpret_cast<const char*>(data) + raw_at, n);
        raw_at += n;
        break;
      }
      case 3:
        std::this_thread::sleep_for(std::chrono::milliseconds(arg % 20));
        break;
      case 4:
        c.close(arg % 2 == 1);
        break;
      case 5:
        if (c.fd >= 0) ::shutdown(c.fd, SHUT_WR);
        break;
      case 6:
        c.read_available();
        break;
    }
  }
  for (auto& c : clients) c.close(false);
  if (!ping_answers()) finding("/ping stopped answering after a lifecycle script");
  return 0;
}
