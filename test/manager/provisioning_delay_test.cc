// Seeded provisioning delays: the same seed gives the same delays, each
// distribution stays in its range with the mean it promises, and bad specs
// are refused naming the text.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "runtime/manager/provisioning_delay.h"

using lull::manager::ProvisioningDelay;

TEST_CASE("fixed delay is always the value", "[manager][delay]") {
  auto d = ProvisioningDelay::parse("fixed:5", 1);
  for (int i = 0; i < 3; ++i) CHECK(d.next_us() == 5000000);
  CHECK(ProvisioningDelay::parse("fixed:0.25", 9).next_us() == 250000);
}

TEST_CASE("uniform and exponential delays: seeded, in range, with their means", "[manager][delay]") {
  auto a = ProvisioningDelay::uniform(1000000, 3000000, 42), b = ProvisioningDelay::uniform(1000000, 3000000, 42);
  auto c = ProvisioningDelay::uniform(1000000, 3000000, 43);
  double sum = 0;
  bool differs = false;
  for (int i = 0; i < 20000; ++i) {
    const auto x = a.next_us();
    CHECK(x == b.next_us());
    differs |= x != c.next_us();
    REQUIRE(x >= 1000000);
    REQUIRE(x <= 3000000);
    sum += x;
  }
  CHECK(differs);
  CHECK(sum / 20000 == Approx(2000000).epsilon(0.02));

  auto e = ProvisioningDelay::parse("exp:2:3", 7);
  sum = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto x = e.next_us();
    REQUIRE(x >= 2000000);
    sum += x - 2000000;
  }
  CHECK(sum / 20000 == Approx(3000000).epsilon(0.05));
}

TEST_CASE("bad provisioning delay specs are refused naming the text", "[manager][delay]") {
  for (const char* spec : {"", "fixed", "fixed:-1", "fixed:x", "uniform:3:1", "exp:1", "normal:1:2", "fixed:1:2"}) {
    INFO(spec);
    try {
      ProvisioningDelay::parse(spec, 0);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find(std::string("'") + spec + "'") != std::string::npos);
    }
  }
}
