// cli/accuracy_table: the `--accuracy FILE` table of `lull profile` and
// `lull loadgen`, read with the project's JSON reader: fractions in [0, 1]
// by model, keys starting with '_' ignored, anything else one line naming
// the file (and the model).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/accuracy_table.h"
#include "cli/commands.h"

using namespace lull::cli;

namespace {

std::string table_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "lull_accuracy_table_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string refusal(const std::string& path) {
  try {
    read_accuracy_fractions(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("accuracy table: fractions by model, comment keys skipped") {
  const auto path = table_file("ok.json", R"({"_source": "TorchVision", "a": 0.5, "b": 1, "c": 0})");
  const auto table = read_accuracy_fractions(path);
  CHECK(table.size() == 3);
  CHECK(table.at("a") == 0.5);
  CHECK(table.at("b") == 1.0);
  CHECK(table.at("c") == 0.0);
}

TEST_CASE("accuracy table: anything but a fraction is one line naming the file and the model") {
  SECTION("a percent") {
    const auto path = table_file("percent.json", R"({"a": 71.9})");
    const auto why = refusal(path);
    CHECK(why.find(path + ": a: accuracy must be a fraction in [0, 1]") == 0);
  }
  SECTION("a quoted number, a negative one, null") {
    for (const std::string value : {R"("0.5")", "-0.1", "null", "[0.5]"}) {
      const auto path = table_file("value.json", R"({"m": )" + value + "}");
      CHECK(refusal(path).find(path + ": m: accuracy must be a fraction") == 0);
    }
  }
  SECTION("a model name with a newline stays on one line") {
    const auto path = table_file("newline.json", R"({"a\nb": 2})");
    const auto why = refusal(path);
    CHECK(why.find('\n') == std::string::npos);
    CHECK(why.find("accuracy must be a fraction") != std::string::npos);
  }
  SECTION("not an object, not JSON, no file") {
    const auto list = table_file("list.json", "[0.5]");
    CHECK(refusal(list).find(list + ": not a JSON object of model -> accuracy") == 0);
    const auto broken = table_file("broken.json", R"({"a": )");
    CHECK(refusal(broken).find(broken + ":") == 0);
    CHECK(refusal("/nonexistent/acc.json").find("/nonexistent/acc.json:") == 0);
  }
}
