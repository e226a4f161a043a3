// cli/output_lock: one holder of an output file's lock at a time (flock on
// PATH.lock, per open file, so two holders in one process conflict as two
// processes do); released when the holder goes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output_lock.h"

using namespace lull::cli;

namespace {

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "lull_output_lock_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace

TEST_CASE("output lock: a second holder of the same file is refused until the first lets go", "[cli][lock]") {
  const std::string path = temp_path("locked_output.pb");
  std::filesystem::remove(path + ".lock");
  auto first = std::make_unique<OutputLock>(path, "--recompile-on-drift");
  CHECK(std::filesystem::exists(path + ".lock"));
  try {
    OutputLock second(path, "--recompile-on-drift");
    FAIL("the second lock was granted");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "--recompile-on-drift " + path + ": another lull process writes it (" + path +
                                       ".lock is locked); give each process its own file");
  }
  const std::string other = temp_path("other_output.pb");
  CHECK_NOTHROW(OutputLock(other, "--recompile-on-drift"));  // another file: its own lock
  first.reset();
  CHECK_NOTHROW(OutputLock(path, "--recompile-on-drift"));
}

TEST_CASE("output lock: standard output takes none, an unwritable place is one usage error", "[cli][lock]") {
  OutputLock a("-", "--recompile-on-drift");
  CHECK_NOTHROW(OutputLock("-", "--recompile-on-drift"));
  CHECK_THROWS_AS(OutputLock("/nonexistent-dir/out.pb", "--recompile-on-drift"), UsageError);
}
