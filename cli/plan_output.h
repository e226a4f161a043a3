#pragma once
// What `lull plan` shows: the plan JSON (the keys the issue fixes: workers,
// models, expected_accuracy, expected_violation_rate for a load; schedule of
// {start_s, load_qps, workers} and worker_seconds for a trace; plus the
// capacity table) and the same as readable tables for stdout.
#include <string>

#include "compiler/plan/capacity_plan.h"

namespace lull::cli {

struct PlanContext {
  std::string task;
  double slo_ms = 0;
  double seconds = 0;  // the whole command so far
};

std::string plan_json(const compiler::PlanRequest& request, const compiler::PlanResult& result, const PlanContext& ctx);
std::string plan_table(const compiler::PlanRequest& request, const compiler::PlanResult& result,
                       const PlanContext& ctx);

}  // namespace lull::cli
