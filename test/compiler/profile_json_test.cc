// lull's profile JSON is read with simdjson (schema/profile_file.cc); these
// tests hold it to what protobuf's JSON parser, the previous reader, gives on
// the same text: equal messages for every file protobuf accepts (the test
// profile, the shipped profiles, the imported artifact, protobuf's
// alternative spellings), a refusal where protobuf refuses, and one line
// naming the file and the field. Two of protobuf's guesses are refused on
// purpose (a lone object where a list belongs, "yes" for a bool): a
// hand-edited file with those is more likely a mistake than a wish.
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "schema/profile_file.h"
#include "test/support/cli_runner.h"
#include "test/support/shared_data.h"

namespace {

using lull::schema::ProfileSet;

// The previous reader: protobuf's JSON mapping, unknown fields refused.
bool protobuf_parse(const std::string& text, ProfileSet* out) {
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  return google::protobuf::util::JsonStringToMessage(text, out, opts).ok();
}

void check_same_as_protobuf(const std::string& path) {
  INFO(path);
  ProfileSet expected;
  REQUIRE(protobuf_parse(lull::test::slurp(path), &expected));
  const ProfileSet got = lull::read_profile_set_json(path);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(got, expected));
}

std::string error_of(const std::string& path) {
  try {
    lull::read_profile_set_json(path);
  } catch (const lull::ProfileFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("profile JSON: simdjson reads what protobuf reads", "[schema][profile]") {
  check_same_as_protobuf(std::string(LULL_SOURCE_DIR) + "/test/data/tiny_profile.json");
  for (const auto& e : std::filesystem::directory_iterator(std::string(LULL_SOURCE_DIR) + "/profiles"))
    if (e.path().extension() == ".json") check_same_as_protobuf(e.path().string());
}

TEST_CASE("profile JSON: protobuf's other spellings are read alike", "[schema][profile]") {
  // lowerCamelCase names, quoted numbers, "Infinity", null for a default,
  // integers written as 2.0, a number in exponent form.
  const std::string text = R"({"task": "t", "provenance": null, "synthetic": "true",
    "models": [{"name": "m", "accuracy": "0.5",
                "latencies": [{"batch": 1, "samplesS": [0.004, "0.005", 4.5e-3]},
                              {"batch": 2.0, "latencyS": "Infinity"},
                              {"batch": "4", "latency_s": 1E-2, "samples_s": null}]}]})";
  const auto path = lull::test::write_temp("spellings.json", text);
  check_same_as_protobuf(path);
  const auto set = lull::read_profile_set_json(path);
  REQUIRE(set.models_size() == 1);
  CHECK(set.models(0).latencies(0).samples_s_size() == 3);
  CHECK(set.models(0).latencies(2).batch() == 4);
}

TEST_CASE("profile JSON: the imported artifact reads as protobuf reads it", "[schema][profile][artifact]") {
  LULL_REQUIRE_SHARED_DATA(lull::test::have_artifact(), "ramsis-artifact/ (image profiles and accuracies)");
  const auto path = lull::test::temp_dir() + "/artifact_import.json";
  lull::write_profile_set_json(
      lull::compiler::import_artifact_profiles(lull::test::artifact_dir(), lull::test::accuracy_json(), "image"), path);
  check_same_as_protobuf(path);
}

TEST_CASE("profile JSON: malformed input is one line naming the file and the field", "[schema][profile][bad-input]") {
  struct Case {
    const char* name;
    const char* text;
    std::vector<std::string> needles;
    bool protobuf_refuses =
        true;  // false: protobuf 3.21 guessed (a lone object as a list, "yes" as true); lull refuses
  };
  const std::vector<Case> cases{
      {"truncated.json", R"({"models": [ {"name": "x", )", {"truncated.json", "malformed profile JSON"}},
      {"empty.json", "", {"empty.json", "malformed profile JSON"}},
      {"list.json", "[1, 2]", {"list.json", "(top level)", "expected an object"}},
      {"unknown.json",
       R"({"models": [{"name": "x", "acuracy": 0.5}]})",
       {"unknown.json", "models[0] (x).acuracy", "unknown field"}},
      {"sample.json",
       R"({"models": [{"name": "x", "latencies": [{"batch": 1, "samples_s": [0.1, "fast"]}]}]})",
       {"sample.json", "models[0] (x).latencies[0].samples_s[1]", "expected a number"}},
      {"batch.json",
       R"({"models": [{"name": "x", "latencies": [{"batch": 1.5}]}]})",
       {"batch.json", "models[0] (x).latencies[0].batch", "whole number"}},
      {"negbatch.json",
       R"({"models": [{"latencies": [{"batch": -1}]}]})",
       {"negbatch.json", "models[0].latencies[0].batch"}},
      {"name.json", R"({"models": [{"name": 7}]})", {"name.json", "models[0].name", "expected a string"}},
      {"synthetic.json", R"({"synthetic": "yes"})", {"synthetic.json", "synthetic", "true or false"}, false},
      {"models.json", R"({"models": {"name": "x"}})", {"models.json", "models", "expected a list"}, false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ProfileSet ignored;
    CHECK(protobuf_parse(c.text, &ignored) == !c.protobuf_refuses);
    const auto msg = error_of(lull::test::write_temp(c.name, c.text));
    INFO(msg);
    CHECK(lull::test::count_lines(msg) == 0);
    for (const auto& n : c.needles) CHECK(msg.find(n) != std::string::npos);
  }
  CHECK(error_of(lull::test::temp_dir() + "/does_not_exist.json").find("does_not_exist.json: cannot open") !=
        std::string::npos);
}

// Found by test/fuzz/profile_json_fuzz.cc (docs/testing.md): a key or a name
// holding an escaped newline split the error over two lines.
TEST_CASE("profile JSON: keys, names and values with control characters stay on one line",
          "[schema][profile][bad-input][fuzz]") {
  const std::vector<std::pair<const char*, const char*>> cases{
      {"fuzz_key.json",
       "{\"task\": \"t\", \"models\": [{\"name\": \"a\", \"accuracy\": \"0.5\", \"latencies\": "
       "[{\"lat\\ncyS\": null}]}], \"synthetic\": \"true\"}\n"},
      {"fuzz_name.json", R"({"models": [{"name": "a\nb\u0001", "acuracy": 0.5}]})"},
      {"fuzz_value.json", R"({"models": [{"name": "a", "accuracy": "x\ty\nz"}]})"},
  };
  for (const auto& [name, text] : cases) {
    const auto msg = error_of(lull::test::write_temp(name, text));
    INFO(msg);
    CHECK(lull::test::count_lines(msg) == 0);
    CHECK(msg.find(name) != std::string::npos);
  }
  CHECK(error_of(lull::test::write_temp("fuzz_key2.json", cases[0].second)).find("lat\\ncyS: unknown field") !=
        std::string::npos);
  CHECK(error_of(lull::test::write_temp("fuzz_name2.json", cases[1].second)).find("(a\\nb\\u0001).acuracy") !=
        std::string::npos);
}
