#pragma once
// Loopback client sockets for the HTTP fuzz targets (http_request_fuzz.cc,
// http_lifecycle_fuzz.cc): a connection to the front end under test with
// 10 s send and receive timeouts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "test/fuzz/fuzz_support.h"

namespace lull::fuzz {

// A socket connected to 127.0.0.1:port. Each connection the server closes
// first leaves a TIME_WAIT socket; at a thousand a second one source address
// runs out of ports, so the source rotates over 127.0.0.2-254, and a refused
// connect is retried; a finding when none succeeds for 5 s.
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) finding("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  static unsigned source = 0;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (source++ % 253));
  ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
  for (int attempt = 0; ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0; ++attempt) {
    if (attempt == 50) {
      std::fprintf(stderr, "connect: %s\n", std::strerror(errno));
      finding("cannot connect to the front end for 5 s");
    }
    ::usleep(100'000);
  }
  return fd;
}

}  // namespace lull::fuzz
