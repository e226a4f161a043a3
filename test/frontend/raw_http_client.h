#pragma once
// A raw TCP client for the front end's abuse tests: it sends exactly the
// bytes a test names (a partial header, a chunked body, two Content-Length
// headers), which no HTTP client library would. Every wait is bounded, and
// a test's verdict is what happened (answered, closed), never how fast.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

namespace lull::serve::testing {

class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  // False once the peer has closed (EPIPE, ECONNRESET).
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  bool readable_within(int wait_ms) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, wait_ms) > 0;
  }

  // Reads one response (header, then Content-Length bytes of body), or what
  // arrived before the peer closed or wait_ms passed.
  std::string read_response(int wait_ms = 10000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
      const auto end_of_header = pending_.find("\r\n\r\n");
      if (end_of_header != std::string::npos) {
        const auto total = end_of_header + 4 + content_length(pending_.substr(0, end_of_header));
        if (pending_.size() >= total) {
          std::string out = pending_.substr(0, total);
          pending_.erase(0, total);
          return out;
        }
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !readable_within(static_cast<int>(left.count()))) break;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      pending_.append(buf, static_cast<size_t>(n));
    }
    std::string out;
    out.swap(pending_);
    return out;
  }

  // True when the server closes the connection within wait_ms (anything it
  // sends before is dropped).
  bool closed_by_peer(int wait_ms = 10000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !readable_within(static_cast<int>(left.count()))) return false;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
    }
  }

 private:
  static size_t content_length(const std::string& header) {
    std::string lower;
    for (char c : header) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto at = lower.find("\r\ncontent-length:");
    return at == std::string::npos ? 0 : std::strtoul(header.c_str() + at + 17, nullptr, 10);
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

// The status code of a response ("HTTP/1.1 413 ..." -> 413), 0 if none.
inline int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.c_str() + 9);
}

// A well-formed POST of `body` to /predictions/classify.
inline std::string post_request(const std::string& body, bool keep_alive = true) {
  return "POST /predictions/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n" +
         std::string(keep_alive ? "" : "Connection: close\r\n") + "Content-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

}  // namespace lull::serve::testing
