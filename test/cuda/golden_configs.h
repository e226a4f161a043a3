#pragma once
// The golden cases' MDP settings (../shared/golden/image_fld100_max.json),
// for tests that compare backends with each other rather than with the
// reference's numbers (test/compiler/golden_test.cc does that).
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "schema/atomic_file.h"
#include "test/compiler/test_support.h"

namespace lull::test {

inline std::vector<compiler::MdpOptions> golden_mdp_options() {
  google::protobuf::Struct root;
  const auto text = read_whole_file(shared_dir() + "/golden/image_fld100_max.json");
  if (!google::protobuf::util::JsonStringToMessage(text, &root).ok()) return {};
  std::vector<compiler::MdpOptions> out;
  for (const auto& c : root.fields().at("cases").list_value().values()) {
    const auto& cfg = c.struct_value().fields().at("config").struct_value().fields();
    compiler::MdpOptions o;
    o.slo_us = cfg.at("slo_ms").number_value() * 1000;
    o.workers = static_cast<int>(cfg.at("workers").number_value());
    o.load_qps = cfg.at("load_qps").number_value();
    out.push_back(o);
  }
  return out;
}

}  // namespace lull::test
