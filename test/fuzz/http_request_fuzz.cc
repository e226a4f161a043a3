// libFuzzer target: the HTTP request path, from raw bytes on a connection to
// the answer. It drives lull's front end only through its public interface
// (runtime/frontend/frontend.h: Frontend, FrontendOptions, QueryService), so it
// covers whichever HTTP server implements it: each input is written to a
// fresh loopback connection, the write side is closed, and the server must
// answer with an HTTP response or close within the time limit, never crash;
// a query that reaches the service must carry a non-empty input. The body
// readers (JSON {"data"}, multipart, the v2 inference request) are also called
// on each input directly. Every 256
// inputs the target checks that /ping still answers (within three tries).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/frontend/frontend.h"
#include "runtime/frontend/v2_front_codec.h"
#include "runtime/net/json_data_field.h"
#include "runtime/net/multipart_form.h"
#include "test/fuzz/fuzz_support.h"
#include "test/fuzz/loopback_socket.h"

namespace {

using lull::fuzz::finding;

class EchoService final : public lull::frontend::QueryService {
 public:
  lull::frontend::Answer serve(std::string input) override {
    if (input.empty()) finding("the front end passed an empty input to the service");
    lull::frontend::Answer a;
    a.body = "{\"len\":" + std::to_string(input.size()) + "}";
    a.model = "m";
    a.worker = 0;
    return a;
  }
  std::string metrics_text() override { return "lull_fuzz 1\n"; }
  bool healthy() override { return true; }
};

lull::frontend::Frontend& frontend() {
  static EchoService service;
  static auto fe = [] {
    lull::frontend::FrontendOptions o;
    o.port = 0;
    o.task = "t";
    o.max_body_bytes = 4096;
    o.io_threads = 2;
    auto f = std::make_unique<lull::frontend::Frontend>(service, o);
    f->start();
    return f;
  }();
  return *fe;
}

// Sends `bytes`, closes the write side, returns what came back before the
// server closed; finding when it neither answers nor closes in 10 s.
std::string exchange(const std::string& bytes) {
  const int fd = lull::fuzz::connect_loopback(frontend().port());
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on a bad request
    at += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string reply;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) finding("the front end neither answered nor closed in 10 s");
      break;  // reset by the server
    }
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static unsigned count = 0;
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  // The two body readers directly too (the server reaches them only behind a
  // well-formed header): never crash, never report data from a body that is not JSON.
  const auto json = lull::net::read_json_data_field(raw);
  if (json.data && !json.valid_json) finding("read_json_data_field found \"data\" in a body that is not JSON");
  if (json.too_deep && json.valid_json) finding("read_json_data_field: too deep yet valid");
  (void)lull::net::multipart_field("multipart/form-data; boundary=b", raw, "data");
  {  // the v2 inference request's checks: a verdict, an input when accepted, an error when not
    lull::frontend::V2InferRequest v2;
    std::string why;
    if (lull::frontend::parse_v2_infer_request(std::string(raw), &v2, &why) ? v2.queries.empty() || !why.empty()
                                                                            : why.empty())
      finding("parse_v2_infer_request: accepted without an input, or refused without a reason");
  }
  const std::string reply = exchange(std::string(reinterpret_cast<const char*>(data), size));
  if (!reply.empty() && reply.rfind("HTTP/1.", 0) != 0) finding("the reply is not an HTTP response");
  if (++count % 256 == 0) {
    // Three tries 100 ms apart: a server that stopped answering fails all of
    // them; the last reply is printed for the record.
    std::string ping;
    for (int attempt = 0; attempt < 3; ++attempt) {
      ping = exchange("GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      if (ping.find(" 200 ") != std::string::npos) break;
      std::fprintf(stderr, "lull fuzz: /ping try %d got %zu bytes: %.200s\n", attempt + 1, ping.size(), ping.c_str());
      ::usleep(100'000);
    }
    if (ping.find(" 200 ") == std::string::npos) finding("/ping stopped answering");
  }
  return 0;
}
