// Shards (runtime/core/shard.h): the --shard parser, the split of the servers,
// and the library a shard serves, which must pick the very policy one lull
// with all the shards' workers picks at the global load.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>

#include "runtime/core/policy_catalog.h"
#include "runtime/core/shard.h"
#include "test/support/runtime_test_support.h"

using lull::core::parse_shard;
using lull::core::PolicyCatalog;
using lull::core::PolicyTable;
using lull::core::Shard;
using lull::core::shard_library;
using lull::core::shard_members;

namespace {

// Worker counts 3..15 (and 4, 8: not multiples of 3), three loads each,
// every policy with its own actions (its first state's batch names it), so
// a wrong table or load shows.
std::vector<PolicyTable> marked_library() {
  std::vector<PolicyTable> lib;
  std::uint16_t mark = 1;
  for (int n : {3, 4, 6, 8, 9, 12, 15}) {
    PolicyTable t = lull::test::tiny_table();
    t.workers = n;
    const auto proto = t.policies.front();
    t.policies.clear();
    for (double per_worker : {10.0, 20.0, 40.0}) {
      auto p = proto;
      p.load_qps = per_worker * n;
      p.actions.front().batch = mark++;
      t.policies.push_back(p);
    }
    lib.push_back(t);
  }
  return lib;
}

}  // namespace

TEST_CASE("shard: I/G parses 0-based and anything else is refused with what is wrong") {
  const Shard s = parse_shard("2/3");
  CHECK(s.index == 2);
  CHECK(s.count == 3);
  CHECK(s.label() == "2/3");
  CHECK(parse_shard("0/1").count == 1);
  for (const char* bad : {"3/2", "3/3", "0/0", "", "1", "/3", "1/", "-1/3", "1/3x", "a/b", "1/3/4", "1.0/3", " 1/3",
                          "99999999/100000000"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(parse_shard("3/2"), Catch::Contains("below G"));
  CHECK_THROWS_WITH(parse_shard("0/0"), Catch::Contains("at least 1"));
}

TEST_CASE("shard: server j goes to shard j mod G and the shares are disjoint and cover the list") {
  CHECK(shard_members({0, 3}, 7) == std::vector<std::size_t>{0, 3, 6});
  CHECK(shard_members({1, 3}, 7) == std::vector<std::size_t>{1, 4});
  CHECK(shard_members({2, 3}, 3) == std::vector<std::size_t>{2});
  CHECK(shard_members({0, 1}, 2) == std::vector<std::size_t>{0, 1});
  for (std::size_t total : {3u, 6u, 10u}) {
    std::multiset<std::size_t> all;
    for (int i = 0; i < 3; ++i)
      for (auto j : shard_members({i, 3}, total)) all.insert(j);
    CHECK(all.size() == total);
    CHECK(std::set<std::size_t>(all.begin(), all.end()).size() == total);
  }
  CHECK_THROWS_WITH(shard_members({0, 4}, 3), Catch::Contains("4 shards but 3 servers"));
}

TEST_CASE("shard: K workers at its load L/G pick the policy one lull of G x K workers picks at L") {
  const auto lib = marked_library();
  const PolicyCatalog whole(lib);
  for (int g : {1, 2, 3}) {
    for (int k : {1, 2, 3, 4, 5, 6}) {
      if (!std::set<int>{3, 4, 6, 8, 9, 12, 15}.count(g * k)) continue;  // not compiled
      const Shard shard{g - 1, g};
      const PolicyCatalog mine(shard_library(lib, shard, k));
      // Below, on, between and above the compiled per-worker loads.
      for (double per_worker : {1.0, 10.0, 15.0, 20.0, 39.9, 40.0, 55.0}) {
        for (bool conservative : {false, true}) {
          const double global = per_worker * g * k;
          const auto a = whole.choose(g * k, global, conservative);
          const auto b = mine.choose(k, global / g, conservative);
          INFO("G=" << g << " K=" << k << " per-worker " << per_worker << " conservative " << conservative);
          REQUIRE(a.policy != nullptr);
          REQUIRE(b.policy != nullptr);
          CHECK(b.workers * g == a.workers);
          CHECK(b.policy->actions.front().batch == a.policy->actions.front().batch);
          CHECK(b.policy->load_qps * g == Approx(a.policy->load_qps));
        }
      }
    }
  }
}

TEST_CASE(
    "shard: counts that are not a multiple of G are left out and none for the own servers of the shard is an error") {
  const auto lib = marked_library();
  std::set<int> counts;
  for (const auto& t : shard_library(lib, {1, 3}, 2)) counts.insert(t.workers);
  CHECK(counts == std::set<int>{1, 2, 3, 4, 5});              // from 3, 6, 9, 12, 15; 4 and 8 dropped
  CHECK(shard_library(lib, {0, 2}, 2).front().workers == 2);  // 4 / 2
  CHECK_THROWS_WITH(shard_library(lib, {0, 3}, 7), Catch::Contains("compiled for 21 workers (3 shards x 7)"));
  CHECK_THROWS_WITH(shard_library({lib.at(1)}, {0, 3}, 1), Catch::Contains("worker counts 4"));
}

TEST_CASE("shard: with no own count (a pool picks it) every multiple of G is kept and none at all is an error") {
  const auto lib = marked_library();
  std::set<int> counts;
  for (const auto& t : shard_library(lib, {0, 2}, 0)) counts.insert(t.workers);
  CHECK(counts == std::set<int>{2, 3, 4, 6});  // from 4, 6, 8, 12
  CHECK_THROWS_WITH(shard_library({lib.at(1)}, {0, 3}, 0), Catch::Contains("a multiple of 3 workers"));
  CHECK_THROWS_WITH(lull::core::shard_table(lib.at(1), {0, 3}), Catch::Contains("not a multiple"));
}

namespace {

// Compiles one policy at exactly the load asked for, its first action
// marking the request (workers and load), and records every request.
struct MarkingCompiler final : lull::core::PolicyCompiler {
  std::vector<lull::core::PolicyRequest> requests;
  PolicyTable compile(const lull::core::PolicyRequest& r) override {
    requests.push_back(r);
    PolicyTable t = lull::test::tiny_table();
    t.workers = r.workers;
    auto p = t.policies.front();
    p.load_qps = r.load_qps;
    p.actions.front().batch = static_cast<std::uint16_t>(r.workers * 1000 + static_cast<int>(r.load_qps) % 1000);
    t.policies = {p};
    return t;
  }
};

// Worker counts 12..28 on one global load grid 5:300:5, as `lull compile
// --load-qps 5:300:5` makes it for each. With G = 7 some grid points (115,
// 225, 230) do not survive (L / 7) * 7 in floating point.
std::vector<PolicyTable> grid_library() {
  std::vector<PolicyTable> lib;
  std::uint16_t mark = 1;
  for (int n : {12, 14, 21, 24, 28}) {
    PolicyTable t = lull::test::tiny_table();
    t.workers = n;
    const auto proto = t.policies.front();
    t.policies.clear();
    for (int l = 5; l <= 300; l += 5) {
      auto p = proto;
      p.load_qps = l;
      p.actions.front().batch = mark++;
      t.policies.push_back(p);
    }
    lib.push_back(t);
  }
  return lib;
}

}  // namespace

TEST_CASE("shard: online compilation sends the request one big lull sends and both then choose the same policy") {
  const auto lib = grid_library();
  for (int g : {2, 3, 4, 7}) {
    for (int k : {1, 2, 3, 5}) {  // 5: a count compiled for neither (G*5 is not in the library)
      PolicyCatalog whole(lib);
      PolicyCatalog mine(shard_library(lib, {g - 1, g}, 0));
      MarkingCompiler for_whole, for_mine;
      lull::core::ShardPolicyCompiler shard_compiler(for_mine, {g - 1, g}, lib.front().loads_qps());
      // On the grid, between its points, on and between steps above it.
      for (double global : {3.0, 15.0, 100.0, 113.0, 115.0, 150.0, 225.0, 229.0, 230.0, 299.9, 300.0, 301.0, 345.0,
                            360.0, 1000.0, 1234.5, 3.0e4 / 7}) {
        INFO("G=" << g << " K=" << k << " global load " << global);
        const auto want = whole.wanted(g * k, global);
        const auto mine_wants = mine.wanted(k, global / g);
        REQUIRE((want.workers == 0) == (mine_wants.workers == 0));
        if (want.workers == 0) continue;  // held by both
        const auto sent = shard_compiler.global_request(mine_wants);
        CHECK(sent.workers == want.workers);
        CHECK(sent.load_qps == want.load_qps);  // bit for bit: the same compilation
        whole.add(for_whole.compile(want));
        mine.add(shard_compiler.compile(mine_wants));
        REQUIRE(for_mine.requests.back().load_qps == for_whole.requests.back().load_qps);
        // Now both hold it, and both choose it.
        CHECK(whole.wanted(g * k, global).workers == 0);
        CHECK(mine.wanted(k, global / g).workers == 0);
        for (bool conservative : {false, true}) {
          const auto a = whole.choose(g * k, global, conservative);
          const auto b = mine.choose(k, global / g, conservative);
          CHECK(b.workers * g == a.workers);
          CHECK(b.policy->actions.front().batch == a.policy->actions.front().batch);
        }
      }
    }
  }
}
