#include <catch2/catch.hpp>

#include <stdexcept>
#include <thread>

#include "runtime/server/start_wait.h"

using lull::server::StartWait;

TEST_CASE("a start wait retries a step until it passes", "[server][start-wait]") {
  StartWait wait(60'000'000, 1000);
  CHECK(wait.enabled());
  int tries = 0;
  CHECK(wait.until("the model servers", [&](std::string* why) {
    if (++tries == 2) throw std::runtime_error("connection refused");
    *why = "not yet";
    return tries >= 4;
  }));
  CHECK(tries == 4);
  CHECK_FALSE(StartWait(0, 1000).enabled());  // no wait: the caller checks once
}

TEST_CASE("a start wait past its deadline throws one line naming the flag and the last try", "[server][start-wait]") {
  StartWait wait(20'000, 1000);  // 20 ms
  int tries = 0;
  try {
    wait.until("the model servers", [&](std::string* why) {
      *why = "try " + std::to_string(++tries);
      return false;
    });
    FAIL("no error at the deadline");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.rfind("the model servers were not ready within 0.02 s (--wait-for-servers-s): try ", 0) == 0);
    CHECK(msg.find("try " + std::to_string(tries)) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
  CHECK(tries >= 2);
}

TEST_CASE("interrupting a start wait ends it at once, and every later one", "[server][start-wait]") {
  StartWait wait(600'000'000, 60'000'000);  // 10 min, a try a minute
  std::thread stopper([&] { wait.interrupt(); });
  CHECK_FALSE(wait.until("the model servers", [](std::string*) { return false; }));
  stopper.join();
  int tries = 0;
  CHECK_FALSE(wait.until("again", [&](std::string*) { return ++tries > 0; }));
  CHECK(tries == 0);
}
