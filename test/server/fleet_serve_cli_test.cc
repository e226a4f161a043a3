// `lull serve --policies FLEET.pb --fleet-servers FILE` (docs/operators-guide.md
// "Serving") against stand-in model servers: a fleet compiled from the tiny
// profile (two kinds of the same speed, two classes), queries routed by
// X-Lull-Class on both protocols, /metrics labelled by class and kind,
// drift reported for the slowed kind only, and every bad servers file
// refused in one line with exit code 2.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test/support/lull_serve_process.h"
#include "test/support/model_server_process.h"
#include "runtime/net/http_client.h"
#include "schema/fleet_file.h"
#include "test/server/promtool_check.h"
#include "test/support/session_test_support.h"
#include "test/support/cli_runner.h"

using namespace lull::net;
using namespace lull::serve::testing;

namespace {

const std::string& fleet_dir() {
  static const std::string dir = [] {
    const std::string d = lull::test::temp_dir() + "/fleet_serve";
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Compiled once: classes "gold" (SLO 300 ms; kinds a x1, b x1) and "bulk"
// (SLO 600 ms; kind a x1), both kinds the tiny profile.
const std::string& fleet_file() {
  static const std::string path = [] {
    const std::string d = fleet_dir();
    std::filesystem::copy_file(source_path("test/data/tiny_profile.json"), d + "/tiny.json",
                               std::filesystem::copy_options::overwrite_existing);
    write_text(d + "/fleet.json",
               R"({"kinds": [{"name": "a", "profiles": "tiny.json", "price_per_s": 1},
                             {"name": "b", "profiles": "tiny.json", "price_per_s": 1}],
                   "classes": [{"name": "gold", "slo_ms": 300, "share": 0.5, "workers": {"a": 1, "b": 1},
                                "weights": {"a": 0.5, "b": 0.5}},
                               {"name": "bulk", "slo_ms": 600, "share": 0.5, "workers": {"a": 1}}]})");
    const auto r = lull::test::run_lull("compile --fleet " + d +
                                        "/fleet.json --load-qps 10,20 --max-queue 4 "
                                        "--intervals 10 --out " +
                                        d + "/fleet.pb");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return d + "/fleet.pb";
  }();
  return path;
}

double labelled_value(const std::string& metrics, const std::string& name_and_labels) {
  const std::string line = metric_line(metrics, name_and_labels + " ");
  return line.empty() ? -1.0 : std::stod(line.substr(line.rfind(' ') + 1));
}

HttpResponse post_class(HttpClient& client, const std::string& url, const std::string& cls, const std::string& body) {
  HttpRequest r;
  r.method = "POST";
  r.url = url;
  r.body = body;
  r.timeout_ms = 10000;
  if (!cls.empty()) r.headers.emplace_back("X-Lull-Class", cls);
  return client.fetch(r);
}

}  // namespace

TEST_CASE("lull serve a fleet: refuses a servers file that does not match it, one line, exit 2",
          "[serve][fleet][cli]") {
  const std::string fleet = fleet_file(), d = fleet_dir(), servers = d + "/bad_servers.json";
  const std::string ok_a = R"("a": ["http://127.0.0.1:1"])", ok_b = R"("b": ["http://127.0.0.1:2"])";
  const std::string bulk = R"("bulk": {"a": ["http://127.0.0.1:3"]})";
  const struct {
    std::string file, says;
  } cases[] = {
      {"{\"gold\": {" + ok_a + ", " + ok_b + ", \"gpu\": [\"http://127.0.0.1:4\"]}, " + bulk + "}",
       "class 'gold': kind 'gpu' is not one of its kinds (a, b)"},
      {"{\"gold\": {" + ok_a + ", " + ok_b + "}}", "class 'bulk' has no servers"},
      {"{\"gold\": {" + ok_a + R"(, "b": ["http://127.0.0.1:2", "http://127.0.0.1:5"]}, )" + bulk + "}",
       "class 'gold', kind 'b': 2 servers; the fleet has 1 workers of this kind"},
      {"{\"gold\": {" + ok_a + ", " + ok_b + "}, " + bulk + R"(, "silver": {"a": []}})",
       "class 'silver' is not in the fleet (its classes: gold, bulk)"},
      {R"(["http://127.0.0.1:1"])", "not {\"CLASS\": {\"KIND\""},
  };
  for (const auto& c : cases) {
    write_text(servers, c.file);
    const auto r =
        lull::test::run_lull("serve --policies " + fleet + " --fleet-servers " + servers + " --listen 127.0.0.1:0");
    INFO(c.file << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--fleet-servers " + servers + ": " + c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  write_text(servers, "{\"gold\": {" + ok_a + ", " + ok_b + "}, " + bulk + "}");
  for (const std::string& extra : {std::string("--shard 0/2"), std::string("--servers http://127.0.0.1:1")}) {
    const auto r = lull::test::run_lull("serve --policies " + fleet + " --fleet-servers " + servers +
                                        " --listen 127.0.0.1:0 " + extra);
    INFO(extra << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not with a fleet policy file yet") != std::string::npos);
  }
  // --autoscale (docs/operators-guide.md "Autoscaling a fleet"): a pool per group, so
  // no fixed servers; each group's command, or --worker-command.
  const std::string kube = "--autoscale --worker-pool kubernetes --k8s-api-server https://127.0.0.1:9 ";
  const struct {
    std::string file, flags, says;
  } scaled[] = {
      {"{\"gold\": {" + ok_a + ", " + ok_b + "}, " + bulk + "}", "--autoscale --worker-command 'x {port}'",
       "class 'gold', kind 'a': servers with --autoscale"},
      {R"({"gold": {"a": {"command": "x {port}"}}})", "--autoscale", "class 'gold', kind 'b': no \"command\""},
      {R"({"gold": {"a": {"command": "x {port}", "port": 1}}})", "--autoscale",
       "class 'gold', kind 'a': unknown field 'port'"},
      {"{\"gold\": {" + ok_a + R"(, "b": {"servers": ["http://127.0.0.1:2"], "command": "x {port}"}}, )" + bulk + "}",
       "", "class 'gold', kind 'b': command: only with --autoscale"},
      // --worker-pool kubernetes: each group its own Deployment and Service, named with {class} and {kind}.
      {"{}", kube + "--k8s-deployment models --k8s-service 'models-{class}-{kind}'",
       "--k8s-deployment models: class 'gold', kind 'b': 'models' is class 'gold', kind 'a''s name too"},
      {"{}", kube + "--k8s-deployment 'models-{class}-{kind}' --k8s-service 'models-{kind}'",
       "--k8s-service models-{kind}: class 'bulk', kind 'a': 'models-a' is class 'gold', kind 'a''s name too"},
      {"{}", kube + "--k8s-deployment 'Models_{class}-{kind}' --k8s-service 'models-{class}-{kind}'",
       "--k8s-deployment Models_{class}-{kind}: class 'gold', kind 'a': 'Models_gold-a' is not a Deployment name"},
      {"{}", kube + "--k8s-deployment 'models-{class}-{kind}' --k8s-service '9-{class}-{kind}'",
       "--k8s-service 9-{class}-{kind}: class 'gold', kind 'a': '9-gold-a' is not a Service name"},
      {"{}", kube + "--k8s-deployment 'models-{class}-{kind}' --k8s-service 'm.{class}-{kind}'",
       "--k8s-service m.{class}-{kind}: class 'gold', kind 'a': 'm.gold-a' is not a Service name"},
      {R"({"gold": {"a": {"command": "x {port}"}}})",
       kube + "--k8s-deployment 'models-{class}-{kind}' --k8s-service 'models-{class}-{kind}'",
       "class 'gold', kind 'a': command: only with --worker-pool local"},
      {"{}", "--autoscale --worker-command 'x {port}' --initial-workers 2", "--initial-workers: not with a fleet"},
      {"{}", "--autoscale --worker-command 'x {port}' --max-violation 0.05", "--max-violation: not with a fleet"},
  };
  for (const auto& c : scaled) {
    write_text(servers, c.file);
    const auto r = lull::test::run_lull("serve --policies " + fleet + " --fleet-servers " + servers +
                                        " --listen 127.0.0.1:0 " + c.flags);
    INFO(c.file << " " << c.flags << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto missing = lull::test::run_lull("serve --policies " + fleet + " --listen 127.0.0.1:0");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--fleet-servers is required") != std::string::npos);
}

TEST_CASE("lull serve a fleet: X-Lull-Class picks the class on both protocols, /metrics labelled, drift per kind",
          "[serve][fleet][cli]") {
  const std::string fleet = fleet_file(), d = fleet_dir();
  // Kind b of class gold is ten times slower than profiled; the others faster (no drift there).
  ModelServerProcess gold_a({"--fake", "fast:1:0", "--fake", "slow:2:0"});
  ModelServerProcess gold_b({"--fake", "fast:40:5", "--fake", "slow:60:10"});
  ModelServerProcess bulk_a({"--fake", "fast:1:0", "--fake", "slow:2:0"});
  const std::string servers = d + "/servers.json";
  write_text(servers, "{\"gold\": {\"a\": [\"" + gold_a.url() + "\"], \"b\": [\"" + gold_b.url() +
                          "\"]}, \"bulk\": {\"a\": [\"" + bulk_a.url() + "\"]}}");
  const std::string out = d + "/recompiled.pb";
  std::filesystem::remove(out);
  LullServeProcess serve(
      {"--policies", fleet, "--fleet-servers", servers, "--no-model-check", "--recompile-on-drift", out},
      d + "/serve.log", d + "/port");
  HttpClient client;
  const std::string url = serve.base() + "/predictions/tiny";
  // Unknown class: 400 naming it, on both routes.
  const auto unknown = post_class(client, url, "silver", "x");
  CHECK(unknown.status == 400);
  CHECK(unknown.body.find("unknown class 'silver'") != std::string::npos);
  const auto unknown_v2 =
      post_class(client, serve.base() + "/v2/models/tiny/infer", "silver",
                 R"({"inputs": [{"name": "input", "datatype": "BYTES", "shape": [1], "data": ["x"]}]})");
  CHECK(unknown_v2.status == 400);
  CHECK(unknown_v2.body.find("unknown class 'silver'") != std::string::npos);
  // Bulk has one kind: every bulk query is served by its server; gold's split over both.
  for (int i = 0; i < 6; ++i) REQUIRE(post_class(client, url, "bulk", "q" + std::to_string(i)).status == 200);
  const auto v2 = post_class(client, serve.base() + "/v2/models/tiny/infer", "bulk",
                             R"({"inputs": [{"name": "input", "datatype": "BYTES", "shape": [1], "data": ["x"]}]})");
  CHECK(v2.status == 200);
  // No header: the first class (gold). One at a time, so each is a batch of one.
  for (int i = 0; i < 60; ++i) REQUIRE(post_class(client, url, "", "g" + std::to_string(i)).status == 200);
  const std::string m = serve.metrics();
  INFO(m);
  CHECK(labelled_value(m, R"(lull_fleet_routed_queries_total{class="bulk",kind="a"})") == 7);
  const double to_a = labelled_value(m, R"(lull_fleet_routed_queries_total{class="gold",kind="a"})");
  const double to_b = labelled_value(m, R"(lull_fleet_routed_queries_total{class="gold",kind="b"})");
  CHECK(to_a + to_b == 60);
  CHECK(to_a >= 15);  // weights 0.5/0.5: 60 draws fall below 15 with probability < 1e-4
  CHECK(to_b >= 15);
  CHECK(labelled_value(m, R"(lull_queries_total{class="bulk",kind="a"})") == 7);
  CHECK(labelled_value(m, R"(lull_fleet_unknown_class_total)") == 2);
  // One family header however many groups; process-wide families once, unlabelled.
  const auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t at = m.find(s); at != std::string::npos; at = m.find(s, at + 1)) ++n;
    return n;
  };
  CHECK(count("# TYPE lull_queries_total ") == 1);
  CHECK(count("# TYPE process_cpu_seconds_total ") == 1);
  CHECK(m.find("process_cpu_seconds_total{class") == std::string::npos);
  check_with_promtool(m);
  // Drift: the slowed kind only (its ~40 batches of one, each >= 40 ms against ~5-12 profiled).
  CHECK(labelled_value(m, R"(lull_latency_drift_total{class="gold",kind="b"})") >= 1);
  CHECK(labelled_value(m, R"(lull_latency_drift_total{class="gold",kind="a"})") == 0);
  CHECK(labelled_value(m, R"(lull_latency_drift_total{class="bulk",kind="a"})") == 0);
  // --recompile-on-drift: the fleet written again with gold/b's set recompiled, the others as served.
  for (int i = 0; i < 300 && !std::filesystem::exists(out); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(std::filesystem::exists(out));
  const auto before = lull::read_fleet_policy(fleet), after = lull::read_fleet_policy(out);
  const auto lat = [](const lull::schema::FleetPolicy& f, int c, int k) {
    return f.classes(c).kinds(k).library().sets(0).models(1).latency_us(0);
  };
  CHECK(lat(after, 0, 1) >= 4 * lat(before, 0, 1));
  CHECK(lat(after, 0, 0) == lat(before, 0, 0));
  CHECK(lat(after, 1, 0) == lat(before, 1, 0));
  const std::string log = lull::test::slurp(d + "/serve.log");
  CHECK(log.find("class 'gold', kind 'b': latency drift: ") != std::string::npos);
  CHECK(log.find("kind 'a': latency drift") == std::string::npos);
}
