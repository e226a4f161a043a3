#pragma once
// The one reader of ../shared/golden/image_fld100_max.json for every test
// binary: each case's configuration, expectations and action rows, as plain
// values. Callers check that the file exists first (see the skip macros).
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "schema/atomic_file.h"
#include "test/support/shared_dir.h"

namespace lull::test {

struct GoldenRow {
  int n = 0, j = 0, model = 0, batch = 0;  // n = N+1 is the full-queue state F
};

struct GoldenRecord {
  std::vector<std::string> models;  // index = model id in the rows
  double slo_ms = 0;
  int workers = 0;
  double load_qps = 0;
  int max_queue = 0;
  int intervals = 0;
  double accuracy = 0;            // expected accuracy per satisfied query
  double violation_rate = 0;      // expected SLO-violation rate
  std::vector<GoldenRow> policy;  // state order (1,0)..(N,J), F
};

inline const std::vector<GoldenRecord>& golden_records() {
  static const std::vector<GoldenRecord> records = [] {
    const std::string path = shared_dir() + "/golden/image_fld100_max.json";
    google::protobuf::Struct root;
    const auto status = google::protobuf::util::JsonStringToMessage(read_whole_file(path), &root);
    if (!status.ok()) throw std::runtime_error(path + ": " + std::string(status.message()));
    auto number = [&](const google::protobuf::Struct& s, const std::string& key) {
      const auto it = s.fields().find(key);
      if (it == s.fields().end()) throw std::runtime_error(path + ": a case lacks '" + key + "'");
      return it->second.number_value();
    };
    std::vector<GoldenRecord> out;
    for (const auto& cv : root.fields().at("cases").list_value().values()) {
      const auto& c = cv.struct_value();
      const auto& config = c.fields().at("config").struct_value();
      const auto& expected = c.fields().at("expected").struct_value();
      GoldenRecord g;
      for (const auto& m : config.fields().at("models").list_value().values()) g.models.push_back(m.string_value());
      g.slo_ms = number(config, "slo_ms");
      g.workers = static_cast<int>(number(config, "workers"));
      g.load_qps = number(config, "load_qps");
      g.max_queue = static_cast<int>(number(config, "max_queue"));
      g.intervals = static_cast<int>(number(config, "intervals"));
      g.accuracy = number(expected, "accuracy");
      g.violation_rate = number(expected, "violation_rate");
      for (const auto& row : c.fields().at("policy").list_value().values()) {
        const auto& r = row.list_value().values();
        g.policy.push_back({static_cast<int>(r[0].number_value()), static_cast<int>(r[1].number_value()),
                            static_cast<int>(r[2].number_value()), static_cast<int>(r[3].number_value())});
      }
      out.push_back(std::move(g));
    }
    return out;
  }();
  return records;
}

}  // namespace lull::test
