// schema/artifact_reader: the one reader of the RAMSIS artifact's files
// (the compiler's import and the simulator's sampled latencies both use it).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>

#include "compiler/compile_inputs.h"
#include "schema/artifact_reader.h"
#include "test/support/cli_runner.h"
#include "test/support/shared_data.h"

namespace fs = std::filesystem;

namespace {

std::string make_artifact(const std::string& name) {
  const std::string dir = lull::test::temp_dir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir + "/net_b");
  fs::create_directories(dir + "/net_a");
  fs::create_directories(dir + "/empty_model");
  std::ofstream(dir + "/net_a/net_a_bsize-1_profile.json") << "[0.010, 0.012,0.011]";
  std::ofstream(dir + "/net_a/net_a_bsize-12_profile.json") << "[0.05]";
  std::ofstream(dir + "/net_a/other_bsize-2_profile.json") << "[1]";  // another model's name: ignored
  std::ofstream(dir + "/net_a/net_a_bsize-x_profile.json") << "[1]";  // no batch size: ignored
  std::ofstream(dir + "/net_b/net_b_bsize-2_profile.json") << "[2e-2, 3]";
  std::ofstream(dir + "/README.md") << "not a model";
  return dir;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const lull::ArtifactError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("artifact reader: models sorted by name, batch sizes from the file names", "[schema][artifact]") {
  const auto dir = make_artifact("artifact_ok");
  const auto models = lull::read_artifact_profiles(dir);
  REQUIRE(models.size() == 2);  // the folder without profile files is not a model
  CHECK(models[0].name == "net_a");
  REQUIRE(models[0].samples_s.size() == 2);
  CHECK(models[0].samples_s.at(1) == std::vector<double>{0.010, 0.012, 0.011});
  CHECK(models[0].samples_s.at(12) == std::vector<double>{0.05});
  CHECK(models[1].samples_s.at(2) == std::vector<double>{0.02, 3});
  const auto only_b = lull::read_artifact_profiles(dir, {"net_b"});
  REQUIRE(only_b.size() == 1);
  CHECK(only_b[0].name == "net_b");
}

TEST_CASE("artifact reader: bad files are named with the entry at fault", "[schema][artifact][bad-input]") {
  const auto dir = make_artifact("artifact_bad");
  std::ofstream(dir + "/net_b/net_b_bsize-3_profile.json") << "[0.1, -0.2]";
  auto msg = error_of([&] { lull::read_artifact_profiles(dir); });
  CHECK(msg.find("net_b_bsize-3_profile.json: entry 1") != std::string::npos);
  CHECK(msg.find("positive") != std::string::npos);
  std::ofstream(dir + "/net_b/net_b_bsize-3_profile.json") << "[0.1, 0.2";
  msg = error_of([&] { lull::read_artifact_profiles(dir); });
  CHECK(msg.find("net_b_bsize-3_profile.json: malformed JSON") != std::string::npos);
  std::ofstream(dir + "/net_b/net_b_bsize-3_profile.json") << "{\"s\": 1}";
  msg = error_of([&] { lull::read_artifact_profiles(dir); });
  CHECK(msg.find("net_b_bsize-3_profile.json: expected a JSON list") != std::string::npos);
  CHECK(error_of([&] { lull::read_artifact_profiles(dir + "/nope"); }).find("not a directory") != std::string::npos);
}

// Found by test/fuzz/artifact_import_fuzz.cc (docs/testing.md): a directory
// where a profile file or the accuracy table belongs was "read" with
// ftell's LONG_MAX as its size (an AddressSanitizer abort; without it,
// fread through a null buffer and "read failed: Bad address").
TEST_CASE("artifact reader: a directory where a file belongs is one line naming it",
          "[schema][artifact][bad-input][fuzz]") {
  const std::string dir = make_artifact("artifact_dir_as_file");
  fs::create_directories(dir + "/net_b/net_b_bsize-4_profile.json");
  const auto msg = error_of([&] { lull::read_artifact_profiles(dir); });
  INFO(msg);
  CHECK(msg == dir + "/net_b/net_b_bsize-4_profile.json: a directory, not a regular file (a profile file must be one)");
  const auto acc = error_of([&] { lull::read_artifact_accuracy_percent(dir); });
  CHECK(acc == dir + ": a directory, not a regular file (a profile file must be one)");
}

TEST_CASE("artifact reader: the accuracy table, nested or bare", "[schema][artifact]") {
  const auto nested =
      lull::test::write_temp("acc_nested.json", R"({"task": "image", "accuracy": {"a": 70.5, "b": 80}})");
  const auto bare = lull::test::write_temp("acc_bare.json", R"({"a": 70.5, "b": 80})");
  for (const auto& path : {nested, bare}) {
    const auto acc = lull::read_artifact_accuracy_percent(path);
    REQUIRE(acc.size() == 2);
    CHECK(acc.at("a") == 70.5);
    CHECK(acc.at("b") == 80);
  }
  CHECK(lull::read_artifact_task(nested) == "image");
  CHECK(lull::read_artifact_task(bare).empty());
  const auto bad = lull::test::write_temp("acc_bad.json", R"({"accuracy": {"a": "high"}})");
  CHECK(error_of([&] { lull::read_artifact_accuracy_percent(bad); }).find("acc_bad.json: accuracy.a") !=
        std::string::npos);
}

TEST_CASE("artifact reader: the shared artifact has the 26 image models", "[schema][artifact]") {
  LULL_REQUIRE_SHARED_DATA(lull::test::have_artifact(), "ramsis-artifact/ (image profiles and accuracies)");
  const auto models = lull::read_artifact_profiles(lull::test::artifact_dir());
  CHECK(models.size() == 26);
  const auto acc = lull::read_artifact_accuracy_percent(lull::test::accuracy_json());
  for (const auto& m : models) {
    INFO(m.name);
    CHECK(acc.count(m.name) == 1);
    CHECK(m.samples_s.count(1) == 1);
  }
}

TEST_CASE("compile inputs with --models read only those models' folders", "[compiler][artifact]") {
  const auto dir = make_artifact("artifact_only_named");
  std::ofstream(dir + "/net_b/net_b_bsize-3_profile.json") << "[0.1, -0.2]";  // malformed, in a model not asked for
  const std::string acc = lull::test::write_temp("artifact_only_named_acc.json", R"({"net_a": 70, "net_b": 80})");
  lull::compiler::CompileSpec spec;
  spec.inputs.path = dir;
  spec.inputs.accuracy_json = acc;
  spec.mdp.workers = 1;
  spec.loads_qps = {1};
  spec.reduction.models = {"net_a"};
  const auto in = lull::compiler::load_compile_inputs(spec);
  REQUIRE(in.profiles.models.size() == 1);
  CHECK(in.profiles.models[0].name == "net_a");
  // Without a model list every folder is read, and the bad file is named.
  spec.reduction.models.clear();
  CHECK_THROWS_WITH(lull::compiler::load_compile_inputs(spec), Catch::Contains("net_b_bsize-3_profile.json"));
}
