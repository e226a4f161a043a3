#include "runtime/net/service_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "runtime/log/log.h"

namespace lull::net {

bool notify_service_manager(const std::string& state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::size_t length = std::strlen(path);
  if ((path[0] != '/' && path[0] != '@') || length >= sizeof address.sun_path) {
    log::warn("NOTIFY_SOCKET '%s': not a socket path or @name; the service manager is not told", path);
    return false;
  }
  std::memcpy(address.sun_path, path, length);
  if (path[0] == '@') address.sun_path[0] = '\0';  // the abstract namespace
  const auto address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  bool sent = false;
  if (fd >= 0) {
    sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&address),
                  address_length) == static_cast<ssize_t>(state.size());
    const int err = errno;
    close(fd);
    errno = err;
  }
  if (!sent) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      log::warn("NOTIFY_SOCKET %s: cannot send (%s); the service manager is not told", path, std::strerror(errno));
  }
  return sent;
}

std::string reloading_state() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const long long usec = static_cast<long long>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

}  // namespace lull::net
