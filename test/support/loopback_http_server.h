#pragma once
// A raw TCP server on 127.0.0.1 for tests that need what no well-behaved
// server sends: a slow-loris answer (a byte a second), a body larger than
// the client's cap, a redirect elsewhere. Each connection is handed to the
// test's function with its socket once the request head has been read; the
// server counts connections, and its destructor closes every socket so a
// function blocked in a write or a sleep (use pause_ms()) returns.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lull::test {

class LoopbackHttpServer {
 public:
  // `answer(fd, request_head)` writes the answer (send_all) and returns; the socket is then closed.
  using Answer = std::function<void(int fd, const std::string& request_head)>;

  explicit LoopbackHttpServer(Answer answer) : answer_(std::move(answer)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("loopback server: cannot listen on 127.0.0.1");
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~LoopbackHttpServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    accept_thread_.join();
    for (auto& t : handlers_) t.join();
    ::close(listen_fd_);
  }
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }
  bool stopping() const { return stopping_; }

  // Writes all of `data`; false once the peer is gone.
  static bool send_all(int fd, const std::string& data) {
    for (std::size_t off = 0; off < data.size();) {
      const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Sleeps `ms` in small steps; false when the server is stopping.
  bool pause_ms(int ms) const {
    for (int t = 0; t < ms && !stopping_; t += 10) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return !stopping_;
  }

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;  // shut down
      ++connections_;
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      open_.push_back(fd);
      handlers_.emplace_back([this, fd] {
        std::string head;
        char c;
        while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) head += c;
        answer_(fd, head);
        ::shutdown(fd, SHUT_RDWR);
        std::lock_guard<std::mutex> lock(mu_);
        ::close(fd);
        for (auto& o : open_)
          if (o == fd) o = -1;
      });
    }
  }

  Answer answer_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<int> open_;  // -1 once closed
  std::vector<std::thread> handlers_;
  std::thread accept_thread_;
};

}  // namespace lull::test
