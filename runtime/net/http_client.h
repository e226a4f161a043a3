#pragma once
// The HttpTransport (http_transport.h) over libcurl: an asynchronous
// HTTP/1.1 client, many requests in flight on one event-loop thread,
// connections kept alive and reused, a timeout per request.
// curl_http_client.cc is the only file in lull that includes curl.
#include <functional>
#include <memory>

#include "runtime/net/http_transport.h"

namespace lull::net {

class HttpClient final : public HttpTransport {
 public:
  struct Options {
    long max_total_connections = 256;  // kept open for reuse
  };
  HttpClient();
  explicit HttpClient(Options options);
  ~HttpClient();  // requests still in flight complete with cancelled = true
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // HttpTransport's; `done` and posted tasks run on the loop thread.
  HttpRequestId send(HttpRequest request, HttpCallback done) override;
  void cancel(HttpRequestId id) override;
  void post(std::function<void()> task) override;

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace lull::net
