// The text task: the artifact's 5 BERT models import and compile
// like the image models, under the task name "text" that the accuracy table's
// file name gives (text_accuracy.json has no "task" field).
#include <catch2/catch.hpp>
#include <filesystem>

#include "compiler/profile/artifact_import.h"
#include "schema/policy_file.h"
#include "test/support/cli_runner.h"
#include "test/support/shared_data.h"

namespace {

const std::vector<std::string> kBert{"bert_tiny", "bert_mini", "bert_small", "bert_medium", "bert_base"};

#define REQUIRE_TEXT_ARTIFACT() \
  LULL_REQUIRE_SHARED_DATA(lull::test::have_text_artifact(), "ramsis-artifact/ (text profiles and accuracies)")

}  // namespace

TEST_CASE("artifact task name: the table's task field, else <task>_accuracy.json, else image", "[compiler][artifact]") {
  const auto nested = lull::test::write_temp("acc_task_field.json", R"({"task": "speech", "accuracy": {"a": 70}})");
  CHECK(lull::compiler::artifact_task_name(nested) == "speech");
  const std::string dir = lull::test::temp_dir() + "/task_names";
  std::filesystem::create_directories(dir);
  const auto text = lull::test::write_temp("task_names/text_accuracy.json", R"({"a": 70})");
  CHECK(lull::compiler::artifact_task_name(text) == "text");
  const auto plain = lull::test::write_temp("task_names/accuracy.json", R"({"a": 70})");
  CHECK(lull::compiler::artifact_task_name(plain) == "image");
  const auto bad = lull::test::write_temp("task_names/bad_accuracy.json", R"({"task": 3, "accuracy": {"a": 70}})");
  CHECK_THROWS_WITH(lull::compiler::artifact_task_name(bad), Catch::Contains("bad_accuracy.json: field 'task'"));
}

TEST_CASE("text artifact: 5 BERT models, accuracies from percent, task 'text'", "[compiler][artifact][text]") {
  REQUIRE_TEXT_ARTIFACT();
  const auto set =
      lull::compiler::import_artifact_profiles(lull::test::text_artifact_dir(), lull::test::text_accuracy_json(), "");
  CHECK(set.task() == "text");
  REQUIRE(set.models_size() == 5);
  for (const auto& m : set.models()) {
    INFO(m.name());
    CHECK(std::find(kBert.begin(), kBert.end(), m.name()) != kBert.end());
    CHECK(m.latencies(0).batch() == 1);
    if (m.name() == "bert_base") CHECK(m.accuracy() == Approx(0.8456));
    if (m.name() == "bert_tiny") CHECK(m.accuracy() == Approx(0.702));
  }
}

TEST_CASE("lull compile --profiles <text artifact> --accuracy-percent text_accuracy.json", "[cli][text][process]") {
  REQUIRE_TEXT_ARTIFACT();
  const std::string out = lull::test::temp_dir() + "/text_slo100.pb";
  const auto r = lull::test::run_lull("compile --profiles " + lull::test::text_artifact_dir() + " --accuracy-percent " +
                                      lull::test::text_accuracy_json() +
                                      " --slo-ms 100 --workers 20 --load-qps 1000,3000 --device cpu --out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto set = lull::read_policy_set(out);
  CHECK(set.task() == "text");
  CHECK(set.workers() == 20);
  REQUIRE(set.models_size() == 5);
  CHECK(set.models(0).name() == "bert_tiny");  // fastest first (mdp-spec 1.1, step 5)
  REQUIRE(set.policies_size() == 2);
  for (const auto& p : set.policies()) {
    CHECK(p.inputs().task() == "text");
    // 20 workers carry 3,000 QPS of BERT queries within 100 ms, above the most
    // accurate model's accuracy floor: every query is served by some BERT.
    CHECK(p.expected().accuracy() >= 0.70);
    CHECK(p.expected().accuracy() <= 0.8456 + 1e-9);
    CHECK(p.expected().violation_rate() < 0.05);
  }
  // Lighter load, at least as accurate a policy.
  CHECK(set.policies(0).expected().accuracy() >= set.policies(1).expected().accuracy() - 1e-9);
}
