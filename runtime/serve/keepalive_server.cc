#include "runtime/serve/keepalive_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace lull::serve {

namespace {

// Waits until `sock` is ready for `events` or `timeout_ms` passes; true when ready.
bool wait_ready(int sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, timeout_ms);
    if (n >= 0) return n > 0;
    if (errno != EINTR) return false;
  }
}

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int rc = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                      : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

// A buffered socket stream: httplib reads request lines a byte at a time, so
// reads are served from a 4 KiB buffer. Each read and write waits at most
// its timeout, like httplib's own SocketStream.
class BufferedSocketStream final : public httplib::Stream {
 public:
  BufferedSocketStream(int sock, int read_timeout_ms, int write_timeout_ms)
      : sock_(sock), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  bool has_buffered() const { return pos_ < end_; }
  bool is_readable() const override { return has_buffered() || wait_ready(sock_, POLLIN, read_timeout_ms_); }
  bool is_writable() const override { return wait_ready(sock_, POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (!has_buffered()) {
      if (!wait_ready(sock_, POLLIN, read_timeout_ms_)) return -1;
      const ssize_t n = recv_some(buf_, sizeof buf_);
      if (n <= 0) return n;
      pos_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - pos_);
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    for (;;) {
      const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || errno != EINTR) return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  ssize_t recv_some(char* ptr, size_t size) {
    for (;;) {
      const ssize_t n = ::recv(sock_, ptr, size, 0);
      if (n >= 0 || errno != EINTR) return n;
    }
  }

  int sock_;
  int read_timeout_ms_;
  int write_timeout_ms_;
  char buf_[4096];
  size_t pos_ = 0, end_ = 0;
};

}  // namespace

bool KeepAliveServer::process_and_close_socket(socket_t sock) {
  // Accepted sockets inherit TCP_NODELAY on Linux; set it anyway, since a
  // small response held back by Nagle's algorithm costs up to 40 ms.
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  BufferedSocketStream strm(sock, static_cast<int>(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000),
                            static_cast<int>(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000));
  const auto idle_limit = std::chrono::seconds(keep_alive_timeout_sec_);
  bool ret = false;
  for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    // Wait for the next request: blocked in poll, in slices so stop() is seen.
    const auto idle_since = std::chrono::steady_clock::now();
    bool ready = strm.has_buffered();
    while (!ready && svr_sock_ != INVALID_SOCKET && std::chrono::steady_clock::now() - idle_since < idle_limit)
      ready = wait_ready(sock, POLLIN, 100);
    if (!ready || svr_sock_ == INVALID_SOCKET) break;
    bool closed = false;
    ret = process_request(strm, left == 1, closed, nullptr);
    if (!ret || closed) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace lull::serve
