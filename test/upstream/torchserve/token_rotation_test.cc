// TorchServe's keys rotated while lull serves: the stand-in rotates its
// inference key through POST /token (as TorchServe does; the old key is
// refused from then on) while lull serve takes 50 queries a second. lull
// reads the key file again and goes on: no 5xx beyond the queries in flight
// at a rotation, each rotation one log line and counted in /metrics. And the
// key file's own logic: a changed file read again, a half-written one kept
// out, a refused key worth repeating only when the file has a newer one.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "test/support/lull_serve_process.h"
#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/torchserve_token.h"
#include "test/support/cli_runner.h"

using namespace lull::net;
using namespace lull::torchserve;
using namespace lull::serve::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("lull-token-rotation-" + std::to_string(getpid()) + "-" + name);
  fs::create_directories(d);
  return d.string();
}

// Written whole under another name, then renamed: a reader never sees half of it.
void write_atomically(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp") << text;
  fs::rename(path + ".tmp", path);
}

std::string key_file_text(const std::string& inference, const std::string& management) {
  return R"({"management": {"key": ")" + management + R"("}, "inference": {"key": ")" + inference + R"("}})";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// POST /token?type=inference to a stand-in with the management key in
// `key_path` (TorchServe's rotation), required to succeed.
void rotate_inference_key(HttpClient& client, const std::string& server_url, const std::string& key_path) {
  HttpRequest r;
  r.method = "POST";
  r.url = server_url + "/token?type=inference";
  r.bearer_token = read_torchserve_key_file(key_path).management;
  r.timeout_ms = 5000;
  const HttpResponse answer = client.fetch(r);
  INFO(answer.describe());
  REQUIRE(answer.status == 200);
}

struct Tally {
  int sent = 0, answered = 0, ok = 0, server_errors = 0, other = 0;
  std::string first_error;
};

// Open loop at lull's image route, 50 queries a second for 6 s (300);
// `before(i, in_flight)` runs just before query i is sent, with the count
// of queries sent and not yet answered. Then waits (at most 20 s) for
// every answer and returns the counts.
Tally open_loop_300(HttpClient& client, const std::string& base, const std::function<void(int, int)>& before) {
  struct Shared {
    std::mutex mu;
    Tally t;
  };
  auto shared = std::make_shared<Shared>();  // outlives this call if an answer comes late
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 300; ++i) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(20 * i));
    int in_flight = 0;
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      in_flight = shared->t.sent - shared->t.answered;
    }
    before(i, in_flight);
    HttpRequest q;
    q.method = "POST";
    q.url = base + "/predictions/image-classification";
    q.body = "query-" + std::to_string(i);
    q.content_type = "application/octet-stream";
    q.timeout_ms = 20000;
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      ++shared->t.sent;
    }
    client.send(q, [shared](HttpResponse r) {
      std::lock_guard<std::mutex> lock(shared->mu);
      Tally& t = shared->t;
      ++t.answered;
      if (r.status == 200) {
        ++t.ok;
        return;
      }
      (r.status >= 500 ? t.server_errors : t.other)++;
      if (t.first_error.empty()) t.first_error = r.describe() + " " + r.body;
    });
  }
  for (int i = 0; i < 400; ++i) {
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      if (shared->t.answered == shared->t.sent) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard<std::mutex> lock(shared->mu);
  return shared->t;
}

}  // namespace

TEST_CASE("key file: read again when it changes, kept when half written, newer keys found after a refusal",
          "[serve][token]") {
  const std::string dir = temp_dir("unit"), path = dir + "/key_file.json";
  write_atomically(path, key_file_text("i1", "m1"));
  std::vector<std::string> lines;
  TorchServeKeyFile file(path, [&](const std::string& line) { lines.push_back(line); });
  CHECK(file.inference_key() == "i1");
  CHECK_FALSE(file.refresh_if_changed());  // unchanged: not read again
  std::string fresh;
  CHECK_FALSE(file.newer_inference_key("i1", &fresh));  // refused, and the file has nothing newer
  CHECK(file.refusals() == 1);

  write_atomically(path, key_file_text("i2", "m1"));
  CHECK(file.refresh_if_changed());
  CHECK(file.inference_key() == "i2");
  CHECK(file.keys().management == "m1");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "TorchServe keys re-read from " + path + " (the file changed): new inference key (reload 1)");

  std::ofstream(path) << R"({"management": {"key": "m1"}, "infer)";  // half written
  CHECK_FALSE(file.refresh_if_changed());
  CHECK_FALSE(file.refresh_if_changed());
  CHECK(file.inference_key() == "i2");
  CHECK(file.read_errors() == 1);  // the same file is not read twice
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].find("still using the keys read before") != std::string::npos);

  write_atomically(path, key_file_text("i3", "m2"));
  CHECK(file.newer_inference_key("i2", &fresh));  // a refusal finds the rotated key at once
  CHECK(fresh == "i3");
  CHECK(file.newer_inference_key("i2", &fresh));  // another request refused for the old key: repeat it too
  CHECK(file.reloads() == 2);
  CHECK(lines.back() ==
        "TorchServe keys re-read from " + path +
            " (after the server refused the inference key): new inference and management keys (reload 2)");
  const std::string metrics = file.metrics_text();
  CHECK(metrics.find("lull_torchserve_key_reloads_total 2\n") != std::string::npos);
  CHECK(metrics.find("lull_torchserve_token_refusals_total 3\n") != std::string::npos);
  CHECK(metrics.find("lull_torchserve_key_file_errors_total 1\n") != std::string::npos);
}

TEST_CASE(
    "token rotation while serving at 50 qps: no 5xx beyond the queries in flight, both rotations logged and counted",
    "[serve][token][rotation]") {
  const std::string dir = temp_dir("serve"), key_path = dir + "/key_file.json";
  write_atomically(key_path, key_file_text("infer-0", "mgmt-0"));
  const std::string profile = source_path("test/data/replay_profile.json");
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " + profile +
                                      " --slo-ms 200 --workers 1 --load-qps 10:60:10 --out " + dir + "/set.pb");
  INFO(compiled.output);
  REQUIRE(compiled.code == 0);
  ModelServerProcess server({"--replay-profile", profile, "--token-file", key_path});
  const std::string log = dir + "/serve.log";
  LullServeProcess lull({"--policies", dir + "/set.pb", "--servers", server.url(), "--torchserve-token-file", key_path},
                        log, dir + "/port");

  HttpClient client;
  // The keys rotated at 2 s and at 4 s.
  int in_flight_at_rotations = 0;
  const Tally t = open_loop_300(client, lull.base(), [&](int i, int in_flight) {
    if (i == 100 || i == 200) {
      rotate_inference_key(client, server.url(), key_path);
      in_flight_at_rotations += in_flight;
    }
  });
  const std::string metrics = lull.metrics();
  const std::string serve_log = read_file(log);
  INFO("first error: " << t.first_error << "\nlog:\n" << serve_log);
  CHECK(t.answered == t.sent);
  CHECK(t.other == 0);
  CHECK(t.server_errors <= in_flight_at_rotations);
  CHECK(t.ok + t.server_errors == 300);
  CHECK(count_of(serve_log, "TorchServe keys re-read from " + key_path) == 2);
  CHECK(metrics.find("lull_torchserve_key_reloads_total 2\n") != std::string::npos);
  CHECK(serve_log.find("down: out of rotation") == std::string::npos);
}

TEST_CASE("token: refusals that persist take the worker down with the reason, new keys bring it back",
          "[serve][token][rotation]") {
  const std::string dir = temp_dir("down"), server_keys = dir + "/server_keys.json",
                    lull_keys = dir + "/lull_keys.json";
  write_atomically(server_keys, key_file_text("infer-0", "mgmt-0"));
  write_atomically(lull_keys, key_file_text("infer-0", "mgmt-0"));  // lull's copy, not rewritten by the server
  const std::string profile = source_path("test/data/replay_profile.json");
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " + profile +
                                      " --slo-ms 200 --workers 1 --load-qps 10:20:10 --out " + dir + "/set.pb");
  REQUIRE(compiled.code == 0);
  ModelServerProcess server({"--replay-profile", profile, "--token-file", server_keys});
  const std::string log = dir + "/serve.log";
  LullServeProcess lull({"--policies", dir + "/set.pb", "--servers", server.url(), "--torchserve-token-file", lull_keys,
                         "--eject-base-ms", "60000", "--eject-max-ms", "60000"},
                        log, dir + "/port");
  HttpClient client;
  const auto ping = [&] {
    HttpRequest r;
    r.url = lull.base() + "/ping";
    return client.fetch(r).status;
  };
  REQUIRE(lull.post("image-classification", "x").status == 200);
  HttpRequest rotate;
  rotate.method = "POST";
  rotate.url = server.url() + "/token?type=inference";
  rotate.bearer_token = "mgmt-0";
  REQUIRE(client.fetch(rotate).status == 200);
  // lull's file still has the old key: each query is refused, and three in a row take the worker out.
  for (int i = 0; i < 3; ++i) CHECK(lull.post("image-classification", "x").status == 503);
  CHECK(ping() == 500);  // the model server's own /ping (no key needed) still passes: lull's does not
  const std::string down = read_file(log);
  CHECK(down.find("down: out of rotation: ejected for 60000 ms after 3 consecutive failed batches: ") !=
        std::string::npos);
  CHECK(
      down.find(
          "refused the inference token (HTTP 400): the inference key of --torchserve-token-file is wrong or expired") !=
      std::string::npos);
  // The operator copies the new keys: the worker is probed at once (not after its 60 s) and rejoins.
  write_atomically(lull_keys, read_file(server_keys));
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    back = ping() == 200;
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(back);
  CHECK(lull.post("image-classification", "x").status == 200);
  const std::string up = read_file(log);
  CHECK(up.find("up: back in rotation") != std::string::npos);
  CHECK(count_of(up, "TorchServe keys re-read from " + lull_keys) == 1);
}

TEST_CASE("key files per server: {port} and {host} name each server's file, one unreadable waits for it",
          "[serve][token]") {
  const std::string dir = temp_dir("per-server");
  fs::create_directories(dir + "/8080");
  write_atomically(dir + "/8080/key_file.json", key_file_text("i-a", "m-a"));
  std::vector<std::string> lines;
  TorchServeKeyFiles files(dir + "/{port}/key_file.json", [&](const std::string& line) { lines.push_back(line); });
  CHECK(files.per_server());
  CHECK(files.path_for("http://127.0.0.1:8080") == dir + "/8080/key_file.json");
  CHECK(TorchServeKeyFiles("/k/{host}-{port}.json").path_for("http://[::1]:9") == "/k/[::1]-9.json");
  TorchServeKeyFile& a = files.add({"http://127.0.0.1:8080", "http://127.0.0.1:8081"});
  CHECK(a.keys().inference == "i-a");
  CHECK(files.of("http://127.0.0.1:8081") == &a);  // by its management URL too
  // A server whose file is not there yet (an autoscaled worker starting): no key, tried again at refresh.
  CHECK_THROWS_WITH(files.add({"http://127.0.0.1:9090", ""}), Catch::Contains(dir + "/9090/key_file.json"));
  CHECK(files.of("http://127.0.0.1:9090") == nullptr);
  fs::create_directories(dir + "/9090");
  write_atomically(dir + "/9090/key_file.json", key_file_text("i-b", "m-b"));
  CHECK(files.of("http://127.0.0.1:9090") == nullptr);  // not re-read per request
  files.refresh_if_changed();
  REQUIRE(files.of("http://127.0.0.1:9090") != nullptr);
  CHECK(files.of("http://127.0.0.1:9090")->keys().management == "m-b");
  // One server's rotation changes its keys only.
  write_atomically(dir + "/9090/key_file.json", key_file_text("i-b2", "m-b"));
  CHECK(files.refresh_if_changed());
  CHECK(files.of("http://127.0.0.1:9090")->inference_key() == "i-b2");
  CHECK(a.inference_key() == "i-a");
  CHECK(files.metrics_text().find("lull_torchserve_key_reloads_total 1\n") != std::string::npos);
  // Without a placeholder: one file for every server, read at once.
  TorchServeKeyFiles shared(dir + "/8080/key_file.json");
  CHECK_FALSE(shared.per_server());
  CHECK(shared.of("http://10.0.0.1:1") == shared.of("http://10.0.0.2:2"));
  CHECK_THROWS_AS(TorchServeKeyFiles(dir + "/none.json"), std::invalid_argument);
}

TEST_CASE("two TorchServe stand-ins with their own keys, both rotated under 50 qps: 0 5xx",
          "[serve][token][rotation]") {
  const std::string dir = temp_dir("two");
  const std::string profile = source_path("test/data/replay_profile.json");
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " + profile +
                                      " --slo-ms 200 --workers 2 --load-qps 10:60:10 --out " + dir + "/set.pb");
  INFO(compiled.output);
  REQUIRE(compiled.code == 0);
  // Each instance its own key file (TorchServe writes its own); lull finds them by port.
  std::vector<std::unique_ptr<ModelServerProcess>> servers;
  fs::create_directories(dir + "/by-port");
  for (const char* name : {"a", "b"}) {
    const std::string own = dir + "/" + name;
    fs::create_directories(own);
    write_atomically(own + "/key_file.json", key_file_text(std::string("infer-") + name, std::string("mgmt-") + name));
    servers.push_back(std::make_unique<ModelServerProcess>(
        std::vector<std::string>{"--replay-profile", profile, "--token-file", own + "/key_file.json"}));
    fs::create_directory_symlink(own, dir + "/by-port/" + std::to_string(servers.back()->port()));
  }
  const std::string log = dir + "/serve.log";
  LullServeProcess lull({"--policies", dir + "/set.pb", "--servers", servers[0]->url() + "," + servers[1]->url(),
                         "--torchserve-token-file", dir + "/by-port/{port}/key_file.json"},
                        log, dir + "/port");
  HttpClient client;
  // Server a rotated at 2 s, b at 3 s, both at 4 s.
  const Tally t = open_loop_300(client, lull.base(), [&](int i, int) {
    if (i == 100 || i == 200) rotate_inference_key(client, servers[0]->url(), dir + "/a/key_file.json");
    if (i == 150 || i == 200) rotate_inference_key(client, servers[1]->url(), dir + "/b/key_file.json");
  });
  const std::string metrics = lull.metrics();
  const std::string serve_log = read_file(log);
  INFO("first error: " << t.first_error << "\nlog:\n" << serve_log);
  CHECK(t.answered == t.sent);
  CHECK(t.ok == 300);
  CHECK(t.server_errors == 0);
  CHECK(t.other == 0);
  // Two rotations each, each re-read from that server's own file.
  CHECK(count_of(serve_log, "TorchServe keys re-read from " + dir + "/by-port/" + std::to_string(servers[0]->port())) ==
        2);
  CHECK(count_of(serve_log, "TorchServe keys re-read from " + dir + "/by-port/" + std::to_string(servers[1]->port())) ==
        2);
  CHECK(metrics.find("lull_torchserve_key_reloads_total 4\n") != std::string::npos);
  CHECK(serve_log.find("down: out of rotation") == std::string::npos);
}

TEST_CASE("TorchServe's rotation order (new key in force before the file is rewritten in place, /ping keyed): 0 5xx",
          "[serve][token][rotation]") {
  // TorchServe 0.12 checks the new key at once and then truncates and rewrites
  // key_file.json; requests and pings refused meanwhile find the old keys or an
  // empty file. The stand-in leaves the file empty for 100 ms after each rotation.
  const std::string dir = temp_dir("order"), key_path = dir + "/key_file.json";
  write_atomically(key_path, key_file_text("infer-0", "mgmt-0"));
  const std::string profile = source_path("test/data/replay_profile.json");
  auto compiled = lull::test::run_cli(std::string(LULL_BINARY) + " compile --profiles " + profile +
                                      " --slo-ms 200 --workers 1 --load-qps 10:60:10 --out " + dir + "/set.pb");
  INFO(compiled.output);
  REQUIRE(compiled.code == 0);
  ModelServerProcess server(
      {"--replay-profile", profile, "--token-file", key_path, "--key-file-write-delay-ms", "100", "--ping-needs-key"});
  const std::string log = dir + "/serve.log";
  LullServeProcess lull({"--policies", dir + "/set.pb", "--servers", server.url(), "--torchserve-token-file", key_path},
                        log, dir + "/port");
  HttpClient client;
  // A single worker, so a refused query has no other to go to; rotations
  // 1.5 s apart, the file whole between them (written 100 ms after each).
  const Tally t = open_loop_300(client, lull.base(), [&](int i, int) {
    if (i == 75 || i == 150 || i == 225) rotate_inference_key(client, server.url(), key_path);
  });
  const std::string metrics = lull.metrics();
  const std::string serve_log = read_file(log);
  INFO("first error: " << t.first_error << "\nlog:\n" << serve_log);
  CHECK(t.answered == t.sent);
  CHECK(t.ok == 300);
  CHECK(count_of(serve_log, "TorchServe keys re-read from " + key_path) == 3);
  CHECK(metrics.find("lull_torchserve_key_reloads_total 3\n") != std::string::npos);
  CHECK(serve_log.find("down: out of rotation") == std::string::npos);
}
