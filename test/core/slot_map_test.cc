// SlotMap: the one record of which worker holds which Dispatcher slot, for
// the simulator and the server alike.
#include <catch2/catch.hpp>

#include "runtime/core/slot_map.h"

using lull::core::SlotMap;

TEST_CASE("SlotMap gives the lowest free slot and takes it back") {
  SlotMap m(3);
  CHECK(m.slots() == 3);
  CHECK(m.take("a") == 0);
  CHECK(m.take("b") == 1);
  CHECK(m.take("c") == 2);
  CHECK(m.take("d") == -1);  // every slot taken
  CHECK(m.slot_of("d") == -1);
  CHECK(m.release("b") == 1);
  CHECK(m.slot_of("b") == -1);
  CHECK(m.release("b") == -1);  // held none any more
  CHECK(m.take("d") == 1);      // the freed slot, the lowest free
  CHECK(m.slot_of("d") == 1);
  CHECK(m.holders().size() == 3);
  CHECK(m.release("a") == 0);
  CHECK(m.take("e") == 0);
}
