// The one bounded file reader (schema/bounded_file.h): a regular file, or a
// symlink to one, is read whole; a FIFO, /dev/zero, a directory, a symlink to
// any of them and a file over its kind's cap are refused at once, in one line
// naming the path, with nothing read.
#include "schema/bounded_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test/support/cli_runner.h"

namespace fs = std::filesystem;

namespace {

std::string refusal(const std::string& path, lull::FileKind kind) {
  try {
    lull::read_bounded_file(path, kind);
  } catch (const lull::FileReadError& e) {
    return e.what();
  }
  return "";
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = lull::test::temp_dir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("bounded reader: a regular file and a symlink to one are read whole", "[schema][bounded-file]") {
  const std::string dir = fresh_dir("bounded_regular");
  const std::string path = dir + "/policy.pb";
  std::ofstream(path, std::ios::binary) << std::string("ab\0cd", 5);
  CHECK(lull::read_bounded_file(path, lull::FileKind::kPolicy) == std::string("ab\0cd", 5));
  fs::create_symlink(path, dir + "/link.pb");
  CHECK(lull::read_bounded_file(dir + "/link.pb", lull::FileKind::kPolicy) == std::string("ab\0cd", 5));
  std::ofstream(dir + "/empty", std::ios::binary).flush();
  CHECK(lull::read_bounded_file(dir + "/empty", lull::FileKind::kSettings).empty());
}

TEST_CASE("bounded reader: a FIFO, /dev/zero, a directory and a symlink to each are refused in one line",
          "[schema][bounded-file][bad-input]") {
  const std::string dir = fresh_dir("bounded_special");
  const std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // no writer: a blocking open would wait forever
  fs::create_directories(dir + "/folder");
  struct Case {
    std::string path, what;
  };
  std::vector<Case> cases = {{fifo, "a FIFO (named pipe)"}, {dir + "/folder", "a directory"}};
  if (fs::exists("/dev/zero")) cases.push_back({"/dev/zero", "a character device"});
  if (fs::exists("/dev/full")) cases.push_back({"/dev/full", "a character device"});
  const std::size_t plain = cases.size();
  for (std::size_t i = 0; i < plain; ++i) {
    const std::string link = dir + "/link" + std::to_string(i);
    fs::create_symlink(cases[i].path, link);
    cases.push_back({link, cases[i].what});
  }
  for (const auto kind :
       {lull::FileKind::kPolicy, lull::FileKind::kSettings, lull::FileKind::kProfile, lull::FileKind::kTrace,
        lull::FileKind::kCache, lull::FileKind::kKey, lull::FileKind::kRequestBody})
    for (const auto& c : cases) {
      const std::string msg = refusal(c.path, kind);
      INFO(c.path << ": " << msg);
      CHECK(msg.rfind(c.path + ": " + c.what + ", not a regular file (a " + lull::file_kind_name(kind), 0) == 0);
      CHECK(msg.find('\n') == std::string::npos);
    }
}

TEST_CASE("bounded reader: a file over its kind's cap is refused before it is read",
          "[schema][bounded-file][bad-input]") {
  const std::string dir = fresh_dir("bounded_cap");
  const std::string path = dir + "/big.conf";
  const std::size_t cap = lull::file_size_cap(lull::FileKind::kSettings);
  { std::ofstream(path, std::ios::binary).flush(); }
  fs::resize_file(path, cap);  // sparse: nothing is written
  CHECK(lull::read_bounded_file(path, lull::FileKind::kSettings).size() == cap);
  fs::resize_file(path, cap + 1);
  const std::string msg = refusal(path, lull::FileKind::kSettings);
  CHECK(msg == path + ": " + std::to_string(cap + 1) + " bytes, more than a settings file may hold (16 MiB)");
  // The same bytes are within a profile's cap.
  CHECK(lull::read_bounded_file(path, lull::FileKind::kProfile).size() == cap + 1);
  // Every kind has a cap, and the request body's is loadgen's own input limit.
  CHECK(lull::file_size_cap(lull::FileKind::kRequestBody) == std::size_t{64} << 20);
}

TEST_CASE("bounded reader: a missing or unreadable file names the path and the reason",
          "[schema][bounded-file][bad-input]") {
  const std::string dir = fresh_dir("bounded_missing");
  CHECK(refusal(dir + "/nothing.pb", lull::FileKind::kPolicy) ==
        dir + "/nothing.pb: cannot open: No such file or directory");
  CHECK(refusal("", lull::FileKind::kPolicy) == "an empty path names no file");
  CHECK(refusal(std::string("a\0b", 3), lull::FileKind::kPolicy) == "a\\u0000b: the path holds a NUL byte");
  // A newline in the path cannot split the message.
  CHECK(refusal(dir + "/two\nlines", lull::FileKind::kPolicy).find('\n') == std::string::npos);
  if (::geteuid() != 0) {
    const std::string locked = dir + "/locked";
    std::ofstream(locked) << "x";
    fs::permissions(locked, fs::perms::none);
    CHECK(refusal(locked, lull::FileKind::kKey) == locked + ": cannot open: Permission denied");
  }
}
