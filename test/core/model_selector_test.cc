// The queue -> state -> action mapping of mdp-spec 2.3 and the fallback of 7,
// on the tiny table whose grid is {0, 50, 100} ms and N = 2.
#include <catch2/catch.hpp>

#include "runtime/core/model_selector.h"
#include "test/support/runtime_test_support.h"

using lull::core::select_action;
using lull::core::state_index;

TEST_CASE("state index: j is the last grid point at or below the earliest slack", "[runtime][selector]") {
  const auto table = lull::test::tiny_table();
  const auto& p = table.policies[0];
  CHECK(state_index(p, 1, 120'000) == 2);  // (1, 2)
  CHECK(state_index(p, 1, 100'000) == 2);  // on the grid point itself
  CHECK(state_index(p, 1, 99'999) == 1);
  CHECK(state_index(p, 1, 50'000) == 1);
  CHECK(state_index(p, 1, 49'999) == 0);
  CHECK(state_index(p, 1, 0) == 0);
  CHECK(state_index(p, 1, -5'000) == 0);   // late queries map to j = 0
  CHECK(state_index(p, 2, 75'000) == 4);   // (2, 1)
  CHECK(state_index(p, 2, 150'000) == 5);  // (2, 2)
  CHECK(state_index(p, 3, 150'000) == 6);  // F
  CHECK(state_index(p, 40, -1) == 6);
}

TEST_CASE("selection returns the table's action for the state", "[runtime][selector]") {
  const auto table = lull::test::tiny_table();
  const auto& p = table.policies[0];
  // Tiny table: state s holds model s % 2 and batch n.
  auto s = select_action(p, 1, 120'000);
  CHECK(s.model == 0);  // state 2
  CHECK(s.batch == 1);
  CHECK_FALSE(s.fallback);
  s = select_action(p, 1, 60'000);
  CHECK(s.model == 1);  // state 1
  s = select_action(p, 2, 75'000);
  CHECK(s.model == 0);  // state 4
  CHECK(s.batch == 2);
  s = select_action(p, 2, 10'000);
  CHECK(s.model == 1);  // state 3
  CHECK(s.batch == 2);
}

TEST_CASE("a queue longer than N falls back to the fastest model serving all", "[runtime][selector]") {
  const auto table = lull::test::tiny_table();
  const auto s = select_action(table.policies[0], 7, 140'000);
  CHECK(s.fallback);
  CHECK(s.model == 0);
  CHECK(s.batch == 7);
}

TEST_CASE("a state missing from the table (batch 0) falls back", "[runtime][selector]") {
  auto table = lull::test::tiny_table();
  auto& p = table.policies[0];
  p.actions[4] = lull::core::Action{1, 0};
  const auto s = select_action(p, 2, 75'000);
  CHECK(s.fallback);
  CHECK(s.model == 0);
  CHECK(s.batch == 2);
  CHECK_FALSE(select_action(p, 2, 120'000).fallback);
}
