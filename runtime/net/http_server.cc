#include "runtime/net/http_server.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <linux/filter.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "runtime/log/log.h"
#include "runtime/net/prometheus_text.h"

namespace lull::net {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t kHeaderLimit = 16 * 1024;  // a request header larger than this gets 431
constexpr std::size_t kReadChunk = 4096;
// After an error response (413, 400) the rest of what the client is sending
// is read and dropped for at most this long before closing, so that the
// close does not reset the connection before the client reads the answer.
constexpr int kLingerMs = 1000;
constexpr std::uint64_t kLingerMaxBytes = 1 << 20;
// stop(): how long responses already handed over may take to be written.
constexpr int kFlushMs = 1000;
// stop(): how long handshakes under way when the listener stops answering
// SYNs may take to complete (loopback and a LAN take microseconds).
constexpr int kHandshakeGraceMs = 20;
// Refused connections (503 at the cap) linger outside the registry; past
// this many at once, a refused one is closed right after its answer.
constexpr int kMaxRefusing = 1024;
// A reserved slot's wait for its request header, at most; a client that
// has not sent it by then is answered 503 like any other at the cap.
constexpr int kReservedHeaderMs = 500;

std::int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Makes the kernel drop SYNs to a listening socket (a socket filter passing
// every segment but a bare SYN), so that no new connection completes into
// its accept queue; the ACKs of handshakes under way still pass. False
// where the filter cannot be attached: the stop then closes as it did.
bool refuse_new_handshakes(int listen_fd) {
  // Classic BPF over the TCP header: load the flags byte, keep SYN and ACK, drop SYN alone.
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 13),          BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 0, 1), BPF_STMT(BPF_RET | BPF_K, 0),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return ::setsockopt(listen_fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0;
}

// A request's framing is unambiguous (RFC 9112 6.1, 6.3): with a
// Transfer-Encoding, its codings are exactly `chunked` (the only one lull
// decodes, and it must come last), there is no Content-Length beside it, and
// the request is HTTP/1.1. Anything else is answered 400 and the connection
// closed: a proxy in front that frames the body by the other header would
// see a different request than lull does (request smuggling). Returns the
// reason, or "" when the framing is fine.
std::string framing_error(const http::request<http::string_body>& msg) {
  std::vector<std::string> codings;
  bool has_te = false;
  for (const auto& field : msg) {
    if (field.name() != http::field::transfer_encoding) continue;
    has_te = true;
    const std::string value(field.value());
    std::size_t at = 0;
    while (at <= value.size()) {
      std::size_t comma = value.find(',', at);
      if (comma == std::string::npos) comma = value.size();
      std::size_t b = at, e = comma;
      while (b < e && (value[b] == ' ' || value[b] == '\t')) ++b;
      while (e > b && (value[e - 1] == ' ' || value[e - 1] == '\t')) --e;
      codings.push_back(value.substr(b, e - b));
      at = comma + 1;
    }
  }
  if (!has_te) return "";
  if (msg.count(http::field::content_length) > 0) return "Transfer-Encoding together with Content-Length";
  if (msg.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request";
  if (codings.size() != 1 || !beast::iequals(codings.front(), "chunked"))
    return "Transfer-Encoding must be exactly 'chunked'";
  return "";
}

// Responses may be handed over from any thread; after stop() they must not
// reach the io_context any more. Every Respond holds this gate.
struct Gate {
  std::mutex mu;
  bool open = true;
};

class Connection;

}  // namespace

int default_io_threads() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 2;
  return std::clamp(CPU_COUNT(&cpus), 1, 2);
}

struct HttpServer::Impl {
  Impl(HttpServerOptions o, RequestHandler h, ErrorRenderer r, std::function<void(int)> c)
      : options(std::move(o)), handler(std::move(h)), render_error(std::move(r)), on_response(std::move(c)) {}

  void do_accept();
  // `at_stop`: taken from the accept queue by stop(), to be answered 503.
  void on_accept(tcp::socket socket, bool at_stop = false);
  // stop(): answers every connection still in the kernel's accept queue with
  // 503 (closing the listener with them queued resets them), then closes it.
  void drain_accept_queue();
  // At the cap: a connection to close (oldest idle, else the slowest reading
  // its header), or none when every connection has a request in service.
  std::shared_ptr<Connection> pick_victim();  // under mu

  HttpServerOptions options;
  RequestHandler handler;
  ErrorRenderer render_error;
  std::function<void(int)> on_response;

  // Declared first, destroyed last: connections in pending handlers go with it.
  // The thread count as asio's concurrency hint: with one thread its
  // scheduler skips the wake-ups a second one would need.
  net::io_context ioc{std::max(1, options.io_threads)};
  // Accepts, retries and the stop's close of the acceptor run on one strand.
  net::strand<net::io_context::executor_type> accept_strand{ioc.get_executor()};
  tcp::acceptor acceptor{ioc};
  net::steady_timer accept_retry{ioc};
  // An async_accept was issued and its handler has not run: stop() waits
  // for it, since a connection it took just before the stop must be answered.
  std::atomic<bool> accept_outstanding{false};
  std::vector<std::thread> threads;
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  int port = 0;
  bool stopped = false;
  // stop() began: requests whose body completes from now on get 503.
  std::atomic<bool> stopping{false};

  std::mutex mu;  // the registry; connections stay alive while registered
  std::list<std::shared_ptr<Connection>> connections;

  std::atomic<std::uint64_t> accepted{0}, idle_timeouts{0}, header_timeouts{0}, body_timeouts{0}, shed{0}, refused{0},
      reserved_served{0};
  // Connections in a reserved slot now (health and metrics past the cap).
  std::atomic<int> reserved{0};
  // Refused connections draining after their 503, outside the registry.
  std::atomic<int> refusing{0};

  // The shed choice's clock (options.now_us, else the steady clock).
  std::int64_t clock_us() const { return options.now_us ? options.now_us() : steady_us(); }
};

namespace {

// One client connection. Its lifetime has one owner, its state: every step
// runs on the connection's strand, and kClosed is final. close() is the only
// way in (idempotent: the first caller unregisters it), and every completion
// handler is wrapped by guarded(), which drops it once the connection is
// closed, so a handler that was already queued when a shed, a timeout or a
// failure closed it completes as a no-op instead of reopening the state and
// closing (unregistering) it a second time.
//
// Shedding never drops a request: the victim (idle, or reading a header)
// has a read pending, which the shed cancels. If that read completes with
// bytes anyway (a request arrived), the victim is serving after all and the
// newcomer it was to make room for is answered 503 instead; only a read that
// ends with nothing closes the victim and starts the newcomer. Every
// connection accepted is thus served or answered 503 (Retry-After), and the
// 503 is followed by a linger like any error answer, so the client reads it.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Where a connection is; read by the acceptor (another thread) to pick a
  // victim. kNew: accepted, not started (no read pending yet): never a victim.
  enum State : int { kNew, kIdle, kHeader, kBody, kServing, kWriting, kLingering, kClosed };

  Connection(tcp::socket socket, HttpServer::Impl& server) : stream_(std::move(socket)), server_(server) {}

  // `f` wrapped as a completion handler that holds the connection alive and
  // runs only while it is open. `f` takes the connection, then the
  // handler's own arguments (an error code, a byte count, or none).
  template <class F>
  auto guarded(F f) {
    return [self = shared_from_this(), f = std::move(f)](auto&&... args) mutable {
      if (self->state() == kClosed) return;
      f(*self, std::forward<decltype(args)>(args)...);
    };
  }

  // Under the registry lock, right after it was added.
  void registered_at(std::list<std::shared_ptr<Connection>>::iterator it) {
    registered_ = it;
    in_registry_ = true;
  }
  void start() {
    net::dispatch(stream_.get_executor(), guarded([](Connection& c) { c.wait_for_request(); }));
  }
  // Taken from the accept queue at stop: its request is read in full and
  // answered 503, and stop() waits (bounded) until that is written, so that
  // no request bytes are left unread when the socket closes (a reset).
  void start_at_stop() {
    at_stop_ = true;
    start();
  }
  // Answers 503 "too many connections" on its own strand, then lingers and closes.
  void refuse_at_cap() {
    net::dispatch(stream_.get_executor(), guarded([](Connection& c) { c.refuse_newcomer(); }));
  }
  // Closes it to make room for `newcomer` (registered, not started), on its
  // own strand; the newcomer then starts, or is refused when this one turns
  // out to be serving (above).
  void request_shed(std::shared_ptr<Connection> newcomer) {
    net::post(stream_.get_executor(), [self = shared_from_this(), newcomer = std::move(newcomer)]() mutable {
      self->shed(std::move(newcomer));
    });
  }

 private:
  void shed(std::shared_ptr<Connection> newcomer) {
    const int s = state_.load();
    if (s == kClosed) return newcomer->start();  // it left on its own: room made
    if (s == kLingering) {                       // answered already; its drain ends now
      server_.shed++;
      close();
      return newcomer->start();
    }
    if (s == kIdle || s == kHeader) {
      newcomer_ = std::move(newcomer);
      return stream_.cancel();  // its pending read decides: settle_shed()
    }
    shed_requested = false;  // serving: a candidate again once idle
    newcomer->refuse_at_cap();
  }
  // A read that a shed cancelled has completed: with bytes (a request is
  // here; the newcomer is refused) or without (this one closes for it).
  // Called by every read handler of kIdle and kHeader; a no-op otherwise.
  void settle_shed(bool made_room) {
    if (!newcomer_) return;
    auto newcomer = std::move(newcomer_);
    newcomer_.reset();
    shed_requested = false;
    if (!made_room) return newcomer->refuse_at_cap();
    server_.shed++;
    close();
    newcomer->start();
  }
  void refuse_newcomer() {
    unregister();
    // A reserved slot, if one is free: its request is read, and served when
    // it is health or metrics (on_header).
    if (!server_.options.reserved_paths.empty() && !reserved_) {
      int now = server_.reserved.load();
      while (now < server_.options.reserved_slots && !server_.reserved.compare_exchange_weak(now, now + 1)) {
      }
      if (now < server_.options.reserved_slots) {
        reserved_ = true;
        // Its own timer, not the stream's: a stream timeout closes the
        // socket, and this one is still to be answered.
        reserved_timer_.emplace(stream_.get_executor());
        reserved_timer_->expires_after(std::chrono::milliseconds(kReservedHeaderMs));
        reserved_timer_->async_wait(guarded([](Connection& c, beast::error_code e) {
          if (e || (c.state() != kIdle && c.state() != kHeader)) return;
          c.reserved_expired_ = true;
          c.stream_.cancel();
        }));
        return wait_for_request();
      }
    }
    answer_at_cap();
  }
  void answer_at_cap() {
    refusing_ = true;
    server_.refusing++;
    server_.refused++;
    ServerResponse r = server_.render_error(503, "too many connections; retry later");
    r.headers.emplace_back("Retry-After", "1");
    write(std::move(r), false);
  }

 public:
  State state() const { return static_cast<State>(state_.load()); }
  // Its response was handed over and is not written yet, or it is a new
  // connection whose first request is still on its way in (it will be read
  // and answered 503): stop() waits for both. A kept-alive idle connection
  // may be closed (HTTP lets a client retry a request on a reused one).
  bool response_pending() const {
    const int s = state_.load();
    const bool first_request_coming = served.load() == 0 && s <= kBody;
    return s == kWriting || (s == kServing && answered_.load()) || (at_stop_ && s != kClosed && s != kLingering) ||
           first_request_coming;
  }
  std::int64_t state_since_us() const { return since_us_.load(); }
  std::atomic<bool> shed_requested{false};
  std::atomic<int> served{0};  // requests answered on it

 private:
  // Moves to `s` unless closed: nothing leaves kClosed.
  void set_state(State s) {
    int now = state_.load();
    while (now != kClosed && !state_.compare_exchange_weak(now, s)) {
    }
    since_us_ = server_.clock_us();
  }

  // Idle: the next request's first bytes (or bytes already buffered).
  void wait_for_request() {
    set_state(kIdle);
    answered_ = false;
    if (buffer_.size() > 0) return read_header();
    stream_.expires_after(std::chrono::milliseconds(server_.options.idle_timeout_ms));
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            guarded([](Connection& c, beast::error_code ec, std::size_t n) {
                              c.buffer_.commit(n);
                              if (ec && n == 0) return c.fail(ec);
                              c.settle_shed(false);
                              c.read_header();
                            }));
  }

  void read_header() {
    set_state(kHeader);
    arrived_ = std::chrono::steady_clock::now();  // until the header is complete: a refusal's start
    method_ = target_ = "-";
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(server_.options.max_body_bytes);
    stream_.expires_after(std::chrono::milliseconds(server_.options.header_timeout_ms));
    continue_header();
  }
  void continue_header() {
    http::async_read_header(stream_, buffer_, *parser_,
                            guarded([](Connection& c, beast::error_code ec, std::size_t) { c.on_header(ec); }));
  }

  void on_header(beast::error_code ec) {
    // For the access log only; the request line is read even when a header
    // field is refused (a Content-Length over the limit: 413).
    if (log::access_enabled() && !parser_->get().method_string().empty()) {
      method_ = std::string(parser_->get().method_string());
      const beast::string_view target = parser_->get().target();
      target_ = std::string(target.substr(0, target.find('?')));
    }
    if (ec) return fail(ec);
    settle_shed(false);
    if (const std::string bad = framing_error(parser_->get()); !bad.empty())
      return refuse(400, "malformed HTTP request: " + bad);
    // lull's class header picks the queue: two of them are ambiguous.
    if (parser_->get().count("X-Lull-Class") > 1) return refuse(400, "more than one X-Lull-Class header");
    if (reserved_) {
      reserved_timer_->cancel();
      // Past the cap only health and metrics are served (GET, no body).
      const beast::string_view target = parser_->get().target();
      const std::string path(target.substr(0, target.find('?')));
      const auto& paths = server_.options.reserved_paths;
      if (parser_->get().method() != http::verb::get || std::find(paths.begin(), paths.end(), path) == paths.end()) {
        parser_.reset();
        stream_.expires_never();
        release_reserved();  // its 503 and linger hold no reserved slot
        return answer_at_cap();
      }
      server_.reserved_served++;
    }
    arrived_ = std::chrono::steady_clock::now();
    set_state(kBody);
    stream_.expires_after(std::chrono::milliseconds(server_.options.body_timeout_ms));
    const auto expect = parser_->get()[http::field::expect];
    if (!parser_->is_done() && beast::iequals(expect, "100-continue")) {
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      return net::async_write(stream_, net::buffer(kContinue, sizeof kContinue - 1),
                              guarded([](Connection& c, beast::error_code e, std::size_t) {
                                if (e) return c.fail(e);
                                c.read_body();
                              }));
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_,
                     guarded([](Connection& c, beast::error_code ec, std::size_t) { c.on_body(ec); }));
  }

  void on_body(beast::error_code ec) {
    if (ec) return fail(ec);
    set_state(kServing);
    stream_.expires_never();
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive() && !reserved_;  // a reserved slot serves one request
    version_ = msg.version();
    if (server_.stopping) {  // read in full, so that closing leaves nothing unread (a reset)
      parser_.reset();
      return write(server_.render_error(503, "the server is stopping; retry later"), false);
    }
    ServerRequest req;
    req.method = std::string(msg.method_string());
    const beast::string_view target = msg.target();
    req.target = std::string(target.substr(0, target.find('?')));
    req.content_type = std::string(msg[http::field::content_type]);
    req.query_class = std::string(msg["X-Lull-Class"]);
    req.inference_header_length = std::string(msg["Inference-Header-Content-Length"]);
    req.content_encoding = std::string(msg[http::field::content_encoding]);
    beast::error_code peer_error;
    const auto peer = stream_.socket().remote_endpoint(peer_error);
    if (!peer_error) req.client = peer.address().to_string();
    req.body = std::move(msg.body());
    req.arrived = arrived_;
    parser_.reset();
    Respond respond = [gate = server_.gate, weak = weak_from_this()](ServerResponse r) {
      std::lock_guard<std::mutex> lock(gate->mu);
      if (!gate->open) return;
      if (auto self = weak.lock()) {
        self->answered_ = true;
        net::post(self->stream_.get_executor(),
                  self->guarded([r = std::move(r)](Connection& c) mutable { c.write(std::move(r), c.keep_alive_); }));
      }
    };
    server_.handler(std::move(req), std::move(respond));
  }

  void write(ServerResponse r, bool keep_alive) {
    set_state(kWriting);
    server_.on_response(r.status);
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), version_);
    res->set(http::field::content_type, r.content_type);
    for (const auto& [name, value] : r.headers) res->set(name, value);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    stream_.expires_after(std::chrono::milliseconds(server_.options.body_timeout_ms));
    http::async_write(stream_, *res, guarded([res, keep_alive](Connection& c, beast::error_code ec, std::size_t) {
                        if (log::access_enabled()) c.log_access(res->result_int(), res->body().size());
                        if (ec) return c.fail(ec);
                        c.served++;
                        if (!keep_alive) return c.linger();
                        c.wait_for_request();
                      }));
  }

  // An error of the connection's current phase: a timeout closes it (counted),
  // a malformed request is answered (400/413/431) and then closed.
  void fail(beast::error_code ec) {
    if (ec == net::error::operation_aborted && newcomer_) {
      // Bytes that arrived just after the cancel are a request too.
      beast::error_code ignored;
      if (stream_.socket().available(ignored) == 0) return settle_shed(true);
      settle_shed(false);
      return state() == kIdle ? wait_for_request() : continue_header();
    }
    if (ec == net::error::operation_aborted && reserved_expired_) {  // a reserved slot's wait ran out
      reserved_expired_ = false;
      parser_.reset();
      release_reserved();
      return answer_at_cap();
    }
    if (ec == beast::error::timeout) {
      switch (state()) {
        case kIdle:
          server_.idle_timeouts++;
          break;
        case kHeader:
          server_.header_timeouts++;
          break;
        case kBody:
        case kWriting:
          server_.body_timeouts++;
          break;
        default:
          break;
      }
      return close();
    }
    if (ec == http::error::body_limit)
      return refuse(413, "request body too large (over " + std::to_string(server_.options.max_body_bytes) + " bytes)");
    if (ec == http::error::header_limit) return refuse(431, "request header too large");
    const int s = state();
    const bool parse_error = ec.category() == http::make_error_code(http::error::bad_method).category() &&
                             ec != http::error::end_of_stream && ec != http::error::partial_message;
    if (parse_error && (s == kHeader || s == kBody)) return refuse(400, "malformed HTTP request: " + ec.message());
    close();  // the client left (eof, reset), or the server stopped
  }

  void refuse(int status, const std::string& message) {
    parser_.reset();
    stream_.expires_never();
    write(server_.render_error(status, message), false);
  }

  // Half-close, then read and drop what the client still sends, briefly.
  void linger() {
    release_reserved();  // answered: a lingering connection holds no reserved slot
    // Refused connections outside the registry drain only while few do.
    if (refusing_ && server_.refusing > kMaxRefusing) return close();
    set_state(kLingering);
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::milliseconds(kLingerMs));
    drain();
  }
  void drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            guarded([](Connection& c, beast::error_code ec, std::size_t n) {
                              c.drained_ += n;
                              if (ec || c.drained_ > kLingerMaxBytes) return c.close();
                              c.drain();
                            }));
  }

  // One access log line: the response just written (or its write failed).
  void log_access(int status, std::size_t bytes) {
    log::AccessRecord r;
    beast::error_code ec;
    const auto peer = stream_.socket().remote_endpoint(ec);
    r.client = ec ? "-" : peer.address().to_string();
    r.method = method_;
    r.path = target_;
    r.status = status;
    r.bytes = bytes;
    r.duration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - arrived_).count();
    log::access(r);
  }

  void close() {
    if (state_.exchange(kClosed) == kClosed) return;
    since_us_ = server_.clock_us();
    if (newcomer_) {  // closed (eof, timeout) while a shed was pending: room made
      auto newcomer = std::move(newcomer_);
      newcomer_.reset();
      newcomer->start();
    }
    if (refusing_) server_.refusing--;
    release_reserved();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    unregister();  // may drop the registry's reference
  }
  void release_reserved() {
    if (!reserved_) return;
    reserved_ = false;
    server_.reserved--;
  }
  void unregister() {
    std::lock_guard<std::mutex> lock(server_.mu);
    if (in_registry_ && !server_.stopped) server_.connections.erase(registered_);
    in_registry_ = false;
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  std::list<std::shared_ptr<Connection>>::iterator registered_;
  bool in_registry_ = false;              // under server_.mu
  std::shared_ptr<Connection> newcomer_;  // waiting for this one's shed to settle
  bool refusing_ = false;                 // answered 503 at the cap, outside the registry
  bool reserved_ = false;                 // in a reserved slot past the cap (health and metrics only)
  bool reserved_expired_ = false;         // its wait for a request ran out: answer 503
  std::atomic<bool> at_stop_{false};      // taken from the accept queue by stop() (start_at_stop)
  std::optional<net::steady_timer> reserved_timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::chrono::steady_clock::time_point arrived_ = std::chrono::steady_clock::now();
  std::string method_ = "-", target_ = "-";  // the request being answered, for the access log
  bool keep_alive_ = true;
  unsigned version_ = 11;
  std::uint64_t drained_ = 0;
  std::atomic<int> state_{kNew};
  std::atomic<bool> answered_{false};
  std::atomic<std::int64_t> since_us_{server_.clock_us()};
};

}  // namespace

void HttpServer::Impl::do_accept() {
  accept_outstanding = true;
  acceptor.async_accept(net::make_strand(ioc),
                        net::bind_executor(accept_strand, [this](beast::error_code ec, tcp::socket socket) {
                          accept_outstanding = false;
                          // Taken before the stop closed the listener: answered like the
                          // rest of its accept queue (dropping it would reset it).
                          if (!ec && stopping) return on_accept(std::move(socket), true);
                          if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
                          if (!ec) {
                            on_accept(std::move(socket));
                            return do_accept();
                          }
                          // Out of descriptors or similar: try again shortly rather than spin.
                          accept_retry.expires_after(std::chrono::milliseconds(50));
                          accept_retry.async_wait(net::bind_executor(accept_strand, [this](beast::error_code e) {
                            if (!e && acceptor.is_open()) do_accept();
                          }));
                        }));
}

void HttpServer::Impl::drain_accept_queue() {
  beast::error_code ec;
  acceptor.cancel(ec);  // the pending async_accept ends (operation_aborted)
  // Closing a listener resets the connections in its accept queue, and a
  // handshake can complete between the last accept and the close. So the
  // kernel first stops answering new SYNs (a client's connect is retried
  // and then refused once the listener is gone), handshakes already under
  // way complete for a short grace, and everything queued is taken and
  // answered 503 before the close.
  const bool held = refuse_new_handshakes(acceptor.native_handle());
  acceptor.non_blocking(true, ec);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(held ? kHandshakeGraceMs : 0);
  for (int n = 0; n < options.max_connections + options.reserved_slots;) {
    tcp::socket socket(net::make_strand(ioc));
    acceptor.accept(socket, ec);
    if (!ec) {
      on_accept(std::move(socket), true);
      ++n;
    } else if (ec == net::error::would_block && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      break;
    }
  }
  acceptor.close(ec);
}

void HttpServer::Impl::on_accept(tcp::socket socket, bool at_stop) {
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // a small response held by Nagle costs up to 40 ms
  accepted++;
  auto fresh = std::make_shared<Connection>(std::move(socket), *this);
  std::shared_ptr<Connection> victim;
  bool refuse = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (static_cast<int>(connections.size()) >= options.max_connections) {
      victim = pick_victim();
      refuse = !victim;  // every connection has a request in service
      if (victim) victim->shed_requested = true;
    }
    if (!refuse) {
      connections.push_back(fresh);
      fresh->registered_at(std::prev(connections.end()));
    }
  }
  if (refuse) return fresh->refuse_at_cap();
  if (victim) return victim->request_shed(std::move(fresh));
  if (at_stop) return fresh->start_at_stop();
  fresh->start();
}

std::shared_ptr<Connection> HttpServer::Impl::pick_victim() {
  // First the oldest kept-alive idle or lingering one (HTTP lets a server
  // close those; a client retries a request it sent on a reused connection
  // the server closed), then the slowest still sending its first bytes or
  // header, once it has used half its header timeout: a client under load
  // may take a while between its connect and its first bytes (over a second
  // at 2,500 qps on the 2-core test machine), and shedding it then would
  // drop its request unanswered.
  std::shared_ptr<Connection> idle, slow;
  const std::int64_t now = clock_us();
  const std::int64_t grace_us = std::int64_t{options.header_timeout_ms} * 500;
  for (const auto& c : connections) {
    if (c->shed_requested) continue;
    const auto s = c->state();
    const std::int64_t since = c->state_since_us();
    const bool kept_alive = s == Connection::kIdle && c->served > 0;
    if ((kept_alive || s == Connection::kLingering) && (!idle || since < idle->state_since_us())) idle = c;
    if (((s == Connection::kIdle && !kept_alive) || s == Connection::kHeader) && now - since >= grace_us &&
        (!slow || since < slow->state_since_us()))
      slow = c;
  }
  return idle ? idle : slow;
}

HttpServer::HttpServer(HttpServerOptions options, RequestHandler handler, ErrorRenderer render_error,
                       std::function<void(int)> on_response)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler), std::move(render_error),
                                   std::move(on_response))) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::start() {
  Impl& s = *impl_;
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  beast::error_code ec;
  const auto address = net::ip::make_address(s.options.host, ec);
  if (ec) throw std::runtime_error(where + ": cannot listen (not an IP address)");
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(s.options.port));
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(where + ": cannot listen (" + ec.message() + "; address in use?)");
  s.port = s.acceptor.local_endpoint().port();
  s.do_accept();
  for (int i = 0; i < s.options.io_threads; ++i) s.threads.emplace_back([&s] { s.ioc.run(); });
}

void HttpServer::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.gate->mu);
    if (!s.gate->open) return;
  }
  // No new connection from here on: the listener closes once the
  // connections already in its accept queue are taken (each is answered
  // 503: closing a listener with connections queued resets them). A client
  // connecting later sees its connect refused, which it may retry elsewhere.
  s.stopping = true;
  auto drained = std::make_shared<std::atomic<bool>>(s.threads.empty());
  net::post(s.accept_strand, [&s, drained] {
    s.accept_retry.cancel();
    s.drain_accept_queue();
    *drained = true;
  });
  // Responses already handed over (at shutdown the session answers every
  // waiting query with 503 just before), and the 503s of the connections
  // that were still in the accept queue, are written before the io threads
  // stop, for at most kFlushMs: a fast exit must not drop them.
  const auto flush_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFlushMs);
  const auto pending = [&s] {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const auto& c : s.connections)
      if (c->response_pending()) return true;
    return false;
  };
  while (!s.threads.empty() && (!*drained || s.accept_outstanding || pending()) &&
         std::chrono::steady_clock::now() < flush_until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  {
    std::lock_guard<std::mutex> lock(s.gate->mu);
    s.gate->open = false;
  }
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  beast::error_code ignored;
  s.acceptor.close(ignored);
  std::lock_guard<std::mutex> lock(s.mu);
  s.stopped = true;
  s.connections.clear();
}

int HttpServer::port() const { return impl_->port; }

HttpServerStats HttpServer::stats() const {
  const Impl& s = *impl_;
  HttpServerStats out;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    out.open = s.connections.size();
  }
  out.accepted = s.accepted;
  out.idle_timeouts = s.idle_timeouts;
  out.header_timeouts = s.header_timeouts;
  out.body_timeouts = s.body_timeouts;
  out.shed = s.shed;
  out.refused = s.refused;
  out.reserved = s.reserved_served;
  return out;
}

std::string render_http_server_stats(const HttpServerStats& s) {
  std::string out;
  prom::family(out, "lull_http_connections_open", "gauge", "Client connections open at the front end.");
  prom::sample(out, "lull_http_connections_open", static_cast<double>(s.open));
  prom::family(out, "lull_http_connections_accepted_total", "counter", "Client connections accepted.");
  prom::sample(out, "lull_http_connections_accepted_total", static_cast<double>(s.accepted));
  prom::family(out, "lull_http_connections_closed_total", "counter",
               "Client connections the front end closed, by reason: idle_timeout, header_timeout, body_timeout "
               "(slow clients), shed (oldest idle or slowest closed at --max-connections), refused (503 at the "
               "cap, all busy).");
  const std::pair<const char*, std::uint64_t> reasons[] = {{"idle_timeout", s.idle_timeouts},
                                                           {"header_timeout", s.header_timeouts},
                                                           {"body_timeout", s.body_timeouts},
                                                           {"shed", s.shed},
                                                           {"refused", s.refused}};
  for (const auto& [reason, n] : reasons)
    prom::sample(out, std::string("lull_http_connections_closed_total{reason=\"") + reason + "\"}",
                 static_cast<double>(n));
  prom::family(out, "lull_http_reserved_requests_total", "counter",
               "Health and metrics requests served in a reserved slot past --max-connections (all busy).");
  prom::sample(out, "lull_http_reserved_requests_total", static_cast<double>(s.reserved));
  return out;
}

}  // namespace lull::net
