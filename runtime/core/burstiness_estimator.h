#pragma once
// The load monitor's burstiness estimate: schema/burstiness_estimator.h, one
// code with the offline fit's `--fit-scale runtime` (compiler/arrival_fit.h).
#include "schema/burstiness_estimator.h"

namespace lull::core {

using ::lull::BurstinessEstimate;
using ::lull::BurstinessEstimator;

}  // namespace lull::core
