// HttpClient (the HttpTransport) over libcurl's multi interface: the only file in lull that
// calls curl (loaded on first use: curl_library.h). One loop thread owns the multi handle and every easy handle;
// other threads hand it work through a mutex-guarded inbox and wake it with
// curl_multi_wakeup. The multi handle's connection cache keeps connections to
// each server alive between requests.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "runtime/net/curl_library.h"
#include "runtime/net/http_client.h"

namespace lull::net {

namespace {

std::int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Transfer {
  HttpRequestId id = 0;
  HttpRequest request;
  HttpCallback done;
  HttpResponse response;
  std::int64_t start_us = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::int64_t cap = t->request.max_response_bytes;
  if (cap > 0 && static_cast<std::int64_t>(t->response.body.size() + size * n) > cap) {
    t->response.too_large = true;
    return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
  }
  t->response.body.append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    auto v0 = line.find_first_not_of(" \t", colon + 1);
    auto v1 = line.find_last_not_of(" \t\r\n");
    std::string value = (v0 == std::string::npos || v1 < v0) ? "" : line.substr(v0, v1 - v0 + 1);
    static_cast<Transfer*>(user)->response.headers.emplace_back(std::move(name), std::move(value));
  }
  return size * n;
}

}  // namespace

class HttpClient::Loop {
 public:
  explicit Loop(Options options) {
    multi_ = curl_.multi_init();
    if (!multi_) throw std::runtime_error("libcurl: curl_multi_init failed");
    curl_.multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options.max_total_connections);
    thread_ = std::thread([this] { run(); });
  }

  ~Loop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    curl_.multi_wakeup(multi_);
    thread_.join();
    for (auto* easy : idle_easies_) curl_.easy_cleanup(easy);
    curl_.multi_cleanup(multi_);
  }

  HttpRequestId send(HttpRequest request, HttpCallback done) {
    auto t = std::make_unique<Transfer>();
    t->request = std::move(request);
    t->done = std::move(done);
    t->start_us = steady_us();
    HttpRequestId id;
    {
      std::lock_guard<std::mutex> lock(mu_);
      id = t->id = ++next_id_;
      inbox_.push_back(std::move(t));
    }
    curl_.multi_wakeup(multi_);
    return id;
  }

  void cancel(HttpRequestId id) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancels_.push_back(id);
    }
    curl_.multi_wakeup(multi_);
  }

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    curl_.multi_wakeup(multi_);
  }

 private:
  void run() {
    for (;;) {
      std::vector<std::unique_ptr<Transfer>> incoming;
      std::vector<HttpRequestId> cancels;
      std::vector<std::function<void()>> tasks;
      bool stopping;
      {
        std::lock_guard<std::mutex> lock(mu_);
        incoming.swap(inbox_);
        cancels.swap(cancels_);
        tasks.swap(tasks_);
        stopping = stopping_;
      }
      for (auto& t : incoming) start(std::move(t));
      for (auto id : cancels) finish_cancelled(id);
      for (auto& task : tasks) task();
      if (stopping) {
        std::vector<HttpRequestId> all;
        for (auto& [id, t] : active_) all.push_back(id);
        for (auto id : all) finish_cancelled(id);
        return;
      }
      int running = 0;
      curl_.multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_.multi_info_read(multi_, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        HttpRequestId id = 0;
        char* priv = nullptr;
        curl_.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        id = reinterpret_cast<HttpRequestId>(priv);
        finish(id, msg->data.result);
      }
      // Bounded wait: wakes on socket activity, on curl_multi_wakeup, or after 100 ms.
      curl_.multi_poll(multi_, nullptr, 0, 100, nullptr);
    }
  }

  void start(std::unique_ptr<Transfer> t) {
    CURL* easy;
    if (!idle_easies_.empty()) {
      easy = idle_easies_.back();
      idle_easies_.pop_back();
      curl_.easy_reset(easy);
    } else {
      easy = curl_.easy_init();
    }
    t->easy = easy;
    const auto& r = t->request;
    curl_.easy_setopt(easy, CURLOPT_URL, r.url.c_str());
    curl_.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_.easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_.easy_setopt(easy, CURLOPT_PRIVATE, reinterpret_cast<char*>(t->id));
    curl_.easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_.easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
    curl_.easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_.easy_setopt(easy, CURLOPT_HEADERDATA, t.get());
    if (r.timeout_ms > 0) curl_.easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_ms));
    if (r.connect_timeout_ms > 0)
      curl_.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout_ms));
    if (!r.ca_file.empty()) curl_.easy_setopt(easy, CURLOPT_CAINFO, r.ca_file.c_str());
    // A declared Content-Length over the cap is refused before any of the body (CURLE_FILESIZE_EXCEEDED).
    if (r.max_response_bytes > 0)
      curl_.easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(r.max_response_bytes));
    if (r.method != "GET" && r.method != "POST") curl_.easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    if (r.method == "POST" || r.method == "PATCH" || r.method == "PUT") {
      curl_.easy_setopt(easy, CURLOPT_POST, 1L);
      curl_.easy_setopt(easy, CURLOPT_POSTFIELDS, r.body.data());
      curl_.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      const std::string ctype =
          "Content-Type: " + (r.content_type.empty() ? std::string("application/octet-stream") : r.content_type);
      t->headers = curl_.slist_append(t->headers, ctype.c_str());
      // Without this, curl waits up to a second for "100 Continue" on bodies over 1 KiB.
      t->headers = curl_.slist_append(t->headers, "Expect:");
    }
    if (!r.bearer_token.empty())
      t->headers = curl_.slist_append(t->headers, ("Authorization: Bearer " + r.bearer_token).c_str());
    for (const auto& [name, value] : r.headers)
      t->headers = curl_.slist_append(t->headers, (name + ": " + value).c_str());
    if (t->headers) curl_.easy_setopt(easy, CURLOPT_HTTPHEADER, t->headers);
    curl_.multi_add_handle(multi_, easy);
    active_.emplace(t->id, std::move(t));
  }

  std::unique_ptr<Transfer> detach(HttpRequestId id) {
    auto it = active_.find(id);
    if (it == active_.end()) return nullptr;
    auto t = std::move(it->second);
    active_.erase(it);
    curl_.multi_remove_handle(multi_, t->easy);
    idle_easies_.push_back(t->easy);
    if (t->headers) curl_.slist_free_all(t->headers);
    t->response.elapsed_us = steady_us() - t->start_us;
    return t;
  }

  void finish(HttpRequestId id, CURLcode code) {
    CURL* easy = active_.count(id) ? active_[id]->easy : nullptr;
    long status = 0;
    if (easy) curl_.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    auto t = detach(id);
    if (!t) return;
    if (t->response.too_large || code == CURLE_FILESIZE_EXCEEDED) {
      t->response.too_large = true;
      t->response.error = describe_response_cap(t->request.max_response_bytes);
      t->response.status = 0;
      t->response.body.clear();
    } else if (code != CURLE_OK) {
      t->response.error = curl_.easy_strerror(code);
      t->response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      t->response.status = 0;
    } else {
      t->response.status = static_cast<int>(status);
    }
    t->done(std::move(t->response));
  }

  void finish_cancelled(HttpRequestId id) {
    auto t = detach(id);
    if (!t) return;
    t->response.cancelled = true;
    t->response.error = "cancelled";
    t->response.status = 0;
    t->done(std::move(t->response));
  }

  const CurlLibrary& curl_ = curl_library();  // first: every member below uses it
  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  bool stopping_ = false;
  HttpRequestId next_id_ = 0;
  std::vector<std::unique_ptr<Transfer>> inbox_;
  std::vector<HttpRequestId> cancels_;
  std::vector<std::function<void()>> tasks_;
  // Loop-thread state: no lock needed.
  std::unordered_map<HttpRequestId, std::unique_ptr<Transfer>> active_;
  std::vector<CURL*> idle_easies_;
};

HttpClient::HttpClient() : HttpClient(Options{}) {}
HttpClient::HttpClient(Options options) : loop_(std::make_unique<Loop>(options)) {}
HttpClient::~HttpClient() = default;

HttpRequestId HttpClient::send(HttpRequest request, HttpCallback done) {
  return loop_->send(std::move(request), std::move(done));
}
void HttpClient::cancel(HttpRequestId id) { loop_->cancel(id); }
void HttpClient::post(std::function<void()> task) { loop_->post(std::move(task)); }

}  // namespace lull::net
