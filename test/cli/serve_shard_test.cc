// `lull serve --shard I/G --recompile-on-drift` (cli/serve_shard): the sets
// recompiled are all those the shard holds, each worker count with a view
// (a multiple of G), not only the file's first.
#include <catch2/catch.hpp>

#include "cli/commands.h"
#include "cli/serve_shard.h"

using namespace lull;

TEST_CASE("a shard's drift recompilation: every set the shard holds is recompiled", "[cli][shard][drift]") {
  const cli::ServeShard shard("0/2");
  server::DriftSpec drift;
  for (int workers : {3, 2, 5, 4}) drift.served.add_sets()->set_workers(workers);
  shard.configure_drift(drift);
  REQUIRE(drift.served.sets_size() == 2);
  CHECK(drift.served.sets(0).workers() == 2);
  CHECK(drift.served.sets(1).workers() == 4);
  CHECK(drift.view);

  server::DriftSpec none;
  none.served.add_sets()->set_workers(3);
  CHECK_THROWS_AS(shard.configure_drift(none), cli::UsageError);
}

TEST_CASE("not sharded, drift recompiles the library as served", "[cli][shard][drift]") {
  const cli::ServeShard shard("");
  server::DriftSpec drift;
  for (int workers : {3, 2}) drift.served.add_sets()->set_workers(workers);
  shard.configure_drift(drift);
  CHECK(drift.served.sets_size() == 2);
  CHECK_FALSE(drift.view);
}

// The session then estimates load by the shard rule (runtime/core/load_monitor.h;
// test/session/serve_session_test.cc checks the session uses it), the one
// `lull simulate --shards G` gives each shard.
TEST_CASE("serve --shard I/G reads its arrivals as every G-th of the fleet's", "[cli][shard]") {
  session::ServeOptions options;
  cli::ServeShard("2/4").configure(options);
  CHECK(options.arrival_thinning == 4);
  session::ServeOptions plain;
  cli::ServeShard("").configure(plain);
  CHECK(plain.arrival_thinning == 1);
}
