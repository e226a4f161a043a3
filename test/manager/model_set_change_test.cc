// Make-before-break model changes: with a recording fake, every load comes
// before the switch and every unload after it, and a model that fails to
// load on one worker is never used and is taken back off the others; then
// the same against two stand-in servers through TorchServe's management API,
// with a model that fails to load on one of them.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "test/support/model_server_process.h"
#include "runtime/manager/model_set_change.h"
#include "runtime/net/http_client.h"
#include "runtime/upstream/torchserve/torchserve_model_control.h"
#include "runtime/upstream/torchserve/model_management.h"

using namespace lull::manager;
using lull::serve::testing::ModelServerProcess;
using lull::torchserve::TorchServeModelControl;

namespace {

class RecordingControl final : public ModelControl {
 public:
  void load(const std::string& worker, const std::string& model) override {
    calls.push_back("load " + worker + " " + model);
    if (broken.count(worker + " " + model)) throw std::runtime_error("HTTP 500 InternalServerException: boom");
  }
  void unload(const std::string& worker, const std::string& model) override {
    calls.push_back("unload " + worker + " " + model);
  }
  std::vector<std::string> calls;
  std::set<std::string> broken;  // "worker model" pairs whose load fails
};

}  // namespace

TEST_CASE("model set change: loads, then the switch, then unloads", "[manager][variants]") {
  RecordingControl control;
  std::vector<std::string> used;
  const auto r =
      change_model_set(control, {"w0", "w1"}, {"a", "b"}, {"b", "c"}, [&](const std::vector<std::string>& m) {
        used = m;
        control.calls.push_back("use");
      });
  CHECK(control.calls == std::vector<std::string>{"load w0 c", "load w1 c", "use", "unload w0 a", "unload w1 a"});
  CHECK(used == std::vector<std::string>{"b", "c"});
  CHECK(r.in_use == used);
  CHECK(r.loaded == std::vector<std::string>{"c"});
  CHECK(r.unloaded == std::vector<std::string>{"a"});
  CHECK(r.failures.empty());
}

TEST_CASE("model set change: a model that fails to load on one worker is not used anywhere",
          "[manager][variants][fault]") {
  RecordingControl control;
  control.broken = {"w1 c"};
  std::vector<std::string> used;
  const auto r = change_model_set(control, {"w0", "w1"}, {"a"}, {"c", "d"}, [&](const std::vector<std::string>& m) {
    used = m;
    control.calls.push_back("use");
  });
  CHECK(control.calls == std::vector<std::string>{"load w0 c", "load w1 c", "unload w0 c", "load w0 d", "load w1 d",
                                                  "use", "unload w0 a", "unload w1 a"});
  CHECK(used == std::vector<std::string>{"d"});
  CHECK(r.failures == std::vector<std::string>{"worker w1: loading c: HTTP 500 InternalServerException: boom"});
}

TEST_CASE("model set change through the management API of two stand-in servers",
          "[manager][variants][fault][process]") {
  ModelServerProcess s0({"--fake", "a:0:0", "--store-fake", "b:0:0", "--store-fake", "c:0:0"});
  ModelServerProcess s1({"--fake", "a:0:0", "--store-fake", "b:0:0", "--store-fake", "c:0:0", "--fail-load", "c"});
  lull::net::HttpClient client;
  TorchServeModelControl control(client);
  std::vector<std::vector<std::string>> held_at_switch;
  const auto list = [&](const ModelServerProcess& s) {
    return lull::torchserve::ModelManagementClient(client, s.url()).list();
  };
  const auto r =
      change_model_set(control, {s0.url(), s1.url()}, {"a"}, {"b", "c"}, [&](const std::vector<std::string>& m) {
        CHECK(m == std::vector<std::string>{"b"});
        held_at_switch = {list(s0), list(s1)};  // the old model is still there when the policy switches
      });
  CHECK(held_at_switch == std::vector<std::vector<std::string>>{{"a", "b"}, {"a", "b"}});
  CHECK(list(s0) == std::vector<std::string>{"b"});
  CHECK(list(s1) == std::vector<std::string>{"b"});
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0] == "worker " + s1.url() + ": loading c: management API " + s1.url() +
                             ": loading model c (url c.mar) failed: HTTP 500 InternalServerException: Failed to start "
                             "workers for model c version: 1.0");
}
