// A model-server stand-in fast enough never to be the bottleneck of a
// throughput measurement (experiments/throughput.sh): one thread, epoll, no
// Python. The stand-in of test/modelserver runs one batch at a time under
// the GIL and answers a few thousand requests a second at best; this one
// answers every request concurrently after its model's fixed latency (a timer,
// not a device lock), so what limits a run is the proxy in front of it.
// It speaks only the parts of TorchServe's API that lull serve, HAProxy's
// health check and lull bench serve use:
//   GET  /ping                -> {"status": "Healthy"}
//   GET  /models/NAME         -> one READY worker, batchSize 1 (lull's start-up check)
//   POST /predictions/NAME    -> lull's batch contract for application/json bodies
//                                ({"inputs": [...]} -> one prediction per input), any
//                                other body one bare prediction; answered BASE_MS +
//                                PER_ITEM_MS * batch after the body arrived
// HTTP/1.1 with keep-alive, one request at a time per connection (no client of
// it pipelines). Usage:
//   lull_fast_model_server --fake m:1:0.05 [--fake NAME:BASE_MS:PER_ITEM_MS ...] [--port P] --port-file FILE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Model {
  double base_ms = 0;
  double per_item_ms = 0;
};

struct Connection {
  int fd = -1;
  std::string in;
  std::string out;
  bool answer_pending = false;  // a request is waiting for its timer
  bool close_after = false;
  std::uint64_t generation = 0;  // tells a timer from one for an earlier connection on the same fd
};

struct Due {
  std::int64_t at_ns;
  int fd;
  std::uint64_t generation;
  std::string response;
  bool operator>(const Due& o) const { return at_ns > o.at_ns; }
};

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "lull_fast_model_server: %s\n", what.c_str());
  std::exit(2);
}

std::string response(int status, const std::string& body, bool close) {
  const char* reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         (close ? "\r\nConnection: close" : "") + "\r\n\r\n" + body;
}

// How many strings the "inputs" array of a batch-contract body holds (base64
// strings carry no quotes or escapes); -1 when there is no such array.
int count_inputs(const std::string& body) {
  const auto key = body.find("\"inputs\"");
  if (key == std::string::npos) return -1;
  const auto open = body.find('[', key);
  if (open == std::string::npos) return -1;
  int n = 0;
  bool in_string = false;
  for (std::size_t i = open + 1; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '"') {
      if (!in_string) ++n;
      in_string = !in_string;
    } else if (c == ']' && !in_string) {
      return n;
    }
  }
  return -1;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Server {
 public:
  Server(std::map<std::string, Model> models, int port) : models_(std::move(models)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 1024) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      die("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
    port_ = ntohs(addr.sin_port);
    epoll_fd_ = ::epoll_create1(0);
    timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    if (epoll_fd_ < 0 || timer_fd_ < 0) die(std::string("epoll/timerfd: ") + std::strerror(errno));
    watch(listen_fd_, EPOLLIN);
    watch(timer_fd_, EPOLLIN);
  }
  int port() const { return port_; }

  void run() {
    epoll_event events[256];
    for (;;) {
      const int n = ::epoll_wait(epoll_fd_, events, 256, -1);
      if (n < 0 && errno != EINTR) die(std::string("epoll_wait: ") + std::strerror(errno));
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd_) {
          accept_all();
        } else if (fd == timer_fd_) {
          std::uint64_t expirations;
          while (::read(timer_fd_, &expirations, sizeof expirations) > 0) {
          }
          fire_due();
        } else {
          auto it = conns_.find(fd);
          if (it == conns_.end()) continue;
          if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(*it->second);
          it = conns_.find(fd);
          if (it != conns_.end() && (events[i].events & EPOLLOUT)) flush(*it->second);
        }
      }
    }
  }

 private:
  void watch(int fd, std::uint32_t events, int op = EPOLL_CTL_ADD) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, op, fd, &ev);
  }

  void accept_all() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK);
      if (fd < 0) return;
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<Connection>();
      c->fd = fd;
      c->generation = ++generations_;
      conns_[fd] = std::move(c);
      watch(fd, EPOLLIN);
    }
  }

  void close_conn(Connection& c) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    conns_.erase(c.fd);  // destroys c
  }

  void on_readable(Connection& c) {
    char buf[65536];
    for (;;) {
      const ssize_t r = ::read(c.fd, buf, sizeof buf);
      if (r > 0) {
        c.in.append(buf, static_cast<std::size_t>(r));
        continue;
      }
      if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return close_conn(c);
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    }
    handle_requests(c);
  }

  // Takes the next complete request off c.in, unless one is being answered.
  void handle_requests(Connection& c) {
    if (c.answer_pending || !c.out.empty()) return;
    const auto head_end = c.in.find("\r\n\r\n");
    if (head_end == std::string::npos) return;
    const std::string head = c.in.substr(0, head_end);
    std::size_t content_length = 0;
    std::string content_type;
    bool close = false;
    std::size_t line_start = head.find("\r\n");
    const std::string request_line = head.substr(0, line_start);
    while (line_start != std::string::npos && line_start < head.size()) {
      const std::size_t from = line_start + 2;
      const std::size_t to = head.find("\r\n", from);
      const std::string line = head.substr(from, to == std::string::npos ? std::string::npos : to - from);
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        const std::string name = lower(line.substr(0, colon));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (name == "content-length") content_length = std::strtoull(value.c_str(), nullptr, 10);
        if (name == "content-type") content_type = lower(value);
        if (name == "connection" && lower(value) == "close") close = true;
      }
      line_start = to;
    }
    if (c.in.size() < head_end + 4 + content_length) return;  // the body is still coming
    const std::string body = c.in.substr(head_end + 4, content_length);
    c.in.erase(0, head_end + 4 + content_length);
    c.close_after = close;

    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.find(' ', sp1 + 1);
    const std::string method = request_line.substr(0, sp1);
    std::string target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    target = target.substr(0, target.find('?'));
    if (method == "GET" && target == "/ping") return answer_now(c, response(200, R"({"status": "Healthy"})", close));
    const std::string models_prefix = "/models/", predictions_prefix = "/predictions/";
    if (method == "GET" && target.rfind(models_prefix, 0) == 0) {
      const std::string name = target.substr(models_prefix.size());
      if (!models_.count(name))
        return answer_now(c, response(404, R"({"code": 404, "type": "ModelNotFoundException"})", close));
      return answer_now(
          c, response(200,
                      R"([{"modelName": ")" + name +
                          R"(", "batchSize": 1, "maxBatchDelay": 0, "workers": [{"id": "9000", "status": "READY"}]}])",
                      close));
    }
    if (method == "POST" && target.rfind(predictions_prefix, 0) == 0) {
      const auto model = models_.find(target.substr(predictions_prefix.size()));
      if (model == models_.end())
        return answer_now(c, response(404, R"({"code": 404, "type": "ModelNotFoundException"})", close));
      const bool batch = content_type.rfind("application/json", 0) == 0;
      const int n = batch ? count_inputs(body) : 1;
      if (n < 0)
        return answer_now(c,
                          response(400, R"({"code": 400, "type": "BadRequest", "message": "no inputs array"})", close));
      const std::string one = R"({"class": )" + std::to_string(body.size() % 1000) + R"(, "score": 1.0})";
      std::string answer;
      if (batch) {
        answer = R"({"predictions": [)";
        for (int i = 0; i < n; ++i) answer += (i ? ", " : "") + one;
        answer += "]}";
      } else {
        answer = one;
      }
      const double ms = model->second.base_ms + model->second.per_item_ms * n;
      c.answer_pending = true;
      schedule({now_ns() + static_cast<std::int64_t>(ms * 1e6), c.fd, c.generation, response(200, answer, close)});
      return;
    }
    answer_now(c, response(404, R"({"code": 404, "type": "ResourceNotFoundException"})", close));
  }

  void answer_now(Connection& c, std::string r) {
    c.out += r;
    flush(c);
  }

  void flush(Connection& c) {
    while (!c.out.empty()) {
      const ssize_t w = ::write(c.fd, c.out.data(), c.out.size());
      if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          watch(c.fd, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
          return;
        }
        return close_conn(c);
      }
      c.out.erase(0, static_cast<std::size_t>(w));
    }
    watch(c.fd, EPOLLIN, EPOLL_CTL_MOD);
    if (c.close_after) return close_conn(c);
    handle_requests(c);  // a request that came while this one was answered
  }

  void schedule(Due d) {
    const bool earliest = due_.empty() || d.at_ns < due_.top().at_ns;
    due_.push(std::move(d));
    if (earliest) arm();
  }

  void arm() {
    itimerspec spec{};
    if (!due_.empty()) {
      const std::int64_t at = std::max<std::int64_t>(due_.top().at_ns, 1);
      spec.it_value.tv_sec = at / 1000000000;
      spec.it_value.tv_nsec = at % 1000000000;
    }
    ::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  void fire_due() {
    const std::int64_t now = now_ns();
    while (!due_.empty() && due_.top().at_ns <= now) {
      Due d = due_.top();
      due_.pop();
      const auto it = conns_.find(d.fd);
      if (it == conns_.end() || it->second->generation != d.generation) continue;  // the client left
      it->second->answer_pending = false;
      answer_now(*it->second, std::move(d.response));
    }
    arm();
  }

  std::map<std::string, Model> models_;
  int listen_fd_ = -1, epoll_fd_ = -1, timer_fd_ = -1, port_ = 0;
  std::uint64_t generations_ = 0;
  std::unordered_map<int, std::unique_ptr<Connection>> conns_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
};

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, Model> models;
  int port = 0;
  std::string port_file;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) die(flag + ": needs a value (usage: --fake NAME:BASE_MS:PER_ITEM_MS --port-file FILE)");
    const std::string value = argv[++i];
    if (flag == "--fake") {
      const auto a = value.find(':'), b = value.find(':', a + 1);
      char* end = nullptr;
      Model m;
      if (a == std::string::npos || b == std::string::npos)
        die("--fake " + value + ": expected NAME:BASE_MS:PER_ITEM_MS");
      m.base_ms = std::strtod(value.c_str() + a + 1, &end);
      m.per_item_ms = std::strtod(value.c_str() + b + 1, &end);
      if (*end || m.base_ms < 0 || m.per_item_ms < 0) die("--fake " + value + ": expected NAME:BASE_MS:PER_ITEM_MS");
      models[value.substr(0, a)] = m;
    } else if (flag == "--port") {
      port = std::atoi(value.c_str());
    } else if (flag == "--port-file") {
      port_file = value;
    } else {
      die("unknown flag " + flag + " (usage: --fake NAME:BASE_MS:PER_ITEM_MS [--port P] --port-file FILE)");
    }
  }
  if (models.empty()) die("--fake: give at least one model");
  Server server(models, port);
  if (!port_file.empty()) {
    // Written whole and renamed, so a reader never sees half a number.
    const std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << server.port() << "\n";
    if (std::rename(tmp.c_str(), port_file.c_str()) != 0) die("--port-file " + port_file + ": cannot write");
  }
  server.run();
}
