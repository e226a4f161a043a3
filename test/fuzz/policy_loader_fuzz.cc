// libFuzzer target: the policy loader (schema/policy_file + runtime/core/policy_loader)
// and the selector that trusts what it loads. A mutated file almost never
// passes the checksums, so besides loading the raw bytes (which must be
// refused cleanly or load) the target parses them as a PolicySet and as a
// PolicyLibrary, re-seals what parses and loads that: semantic damage (empty
// grids, short latency lists, out-of-range actions) gets past the seal and
// must be caught by the loader's own checks. A table that loads is then run
// through select_action for every queue length and grid point, which must
// pick a listed model and a batch in 1..queue length.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "runtime/core/model_selector.h"
#include "runtime/core/policy_loader.h"
#include "schema/policy.pb.h"
#include "schema/policy_file.h"
#include "test/fuzz/fuzz_support.h"

namespace {

using lull::fuzz::finding;

void exercise(const lull::core::PolicyTable& table) {
  using lull::core::select_action;
  const int models = static_cast<int>(table.models.size());
  for (const auto& p : table.policies) {
    std::vector<std::int64_t> slacks = {-1, table.slo_us + 1};
    for (double t : p.slack_grid_us) slacks.push_back(static_cast<std::int64_t>(t));
    for (int n = 1; n <= p.max_queue + 1 && n <= 300; ++n)
      for (std::int64_t s : slacks) {
        const auto sel = select_action(p, n, s);
        if (sel.model < 0 || sel.model >= models) finding("selector picked a model the table lacks");
        if (sel.batch < 1 || sel.batch > n) finding("selector picked a batch outside 1..queue length");
        if (!sel.fallback && table.models[sel.model].latency_us.size() < static_cast<size_t>(sel.batch))
          finding("selector picked a batch the model has no latency for");
      }
  }
}

// Loads the file at `path`; a refusal must name it in one line.
void load(const std::string& path) {
  try {
    exercise(lull::core::load_policy_table(path, {}));
  } catch (const std::runtime_error& e) {
    lull::fuzz::check_error_names(e.what(), path);
  }
}

}  // namespace

// protobuf logs every string field with invalid UTF-8 it refuses; thousands
// of lines a second would only slow the run (the refusal is what is checked).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  load(lull::fuzz::write_scratch("raw.pb", bytes));

  lull::schema::PolicySet set;
  if (set.ParseFromString(bytes)) load(lull::fuzz::write_scratch("resealed.pb", lull::policy_set_bytes(set)));

  lull::schema::PolicyLibrary lib;
  if (lib.ParseFromString(bytes) && lib.sets_size() > 0) {
    const std::string path = lull::fuzz::write_scratch("library.pb", lull::policy_library_bytes(lib));
    try {
      const auto read = lull::read_policy_library(path);
      for (const auto& s : read.sets()) exercise(lull::core::policy_table_from_proto(s, {}, path));
    } catch (const std::runtime_error& e) {
      lull::fuzz::check_error_names(e.what(), path);
    }
  }
  return 0;
}
