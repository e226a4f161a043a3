// lull serve --shard's bad input (docs/operators-guide.md "Shards"): each refused
// before any server is contacted, with one line naming --shard and exit 2.
// The serving itself is checked on real processes by the ctests
// serve.shard_fault and serve.shard_pool, and experiments/shards.sh.
#include <catch2/catch.hpp>

#include <string>

#include "schema/policy_file.h"
#include "test/support/runtime_test_support.h"
#include "test/sim/usage_error_check.h"
#include "test/support/cli_runner.h"

namespace {

// The tiny set compiled for 2 workers.
std::string two_worker_set() {
  const std::string path = lull::test::temp_dir() + "/shard_tiny_w2.pb";
  lull::write_policy_set(lull::test::tiny_policy_set(), path);
  return path;
}

// Nothing listens on these: every case must fail before contacting one.
std::string servers(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ",http://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(9 + i);
  return s;
}

}  // namespace

TEST_CASE(
    "lull serve --shard: a bad I/G or more shards than servers or no policies for G x its workers is one line and exit "
    "2",
    "[serve][cli][shard]") {
  const std::string set = two_worker_set();
  const std::string port_file = lull::test::temp_dir() + "/shard_cli.port";
  const std::string base = "serve --policies " + set + " --port-file " + port_file + " --servers ";
  lull::test::check_usage_error(base + servers(2) + " --shard 3/2", "--shard 3/2: the shard index is 0-based",
                                port_file);
  lull::test::check_usage_error(base + servers(2) + " --shard 0/0", "--shard 0/0: the shard count G must be at least 1",
                                port_file);
  lull::test::check_usage_error(base + servers(2) + " --shard 1of2", "--shard 1of2: expected I/G", port_file);
  lull::test::check_usage_error(base + servers(2) + " --shard 0/3", "--shard 0/3: 3 shards but 2 servers", port_file);
  // Shard 0 of 2 owns servers 0 and 2 of 3: it needs a set for 4 workers, not 2.
  lull::test::check_usage_error(base + servers(3) + " --shard 0/2",
                                "--shard 0/2: shard 0/2 has 2 servers, so it needs policies compiled for 4 workers",
                                port_file);
  // With --autoscale the pool picks the count: any multiple of G will do, none is refused.
  lull::test::check_usage_error("serve --policies " + set + " --autoscale --worker-command 'x {port}' --shard 0/3",
                                "--shard 0/3: shard 0/3 needs policies compiled for a multiple of 3 workers",
                                port_file);
  // The Kubernetes pool: each shard its own Deployment and Service, named with {shard}.
  const std::string kube = "serve --policies " + set + " --port-file " + port_file +
                           " --autoscale --worker-pool kubernetes --k8s-api-server https://127.0.0.1:9 ";
  lull::test::check_usage_error(kube + "--k8s-deployment models --k8s-service models-{shard} --shard 1/2",
                                "--shard 1/2 with --worker-pool kubernetes: --k8s-deployment and --k8s-service need "
                                "{shard}",
                                port_file);
  lull::test::check_usage_error(kube + "--k8s-deployment models-{shard} --k8s-service models-{shard}",
                                "--k8s-deployment/--k8s-service: {shard} without --shard", port_file);
  // A fleet's group names (docs/operators-guide.md) mean nothing to one policy set.
  lull::test::check_usage_error(kube + "--k8s-deployment models --k8s-service models-{kind}",
                                "--k8s-deployment/--k8s-service: {class} or {kind} without a fleet policy file",
                                port_file);
}
