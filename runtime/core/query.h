#pragma once
// A query as the scheduler sees it: an id the backend echoes back, and the
// deadline stamped by the central queue on arrival.
#include <cstdint>

#include "runtime/core/backend.h"

namespace lull::core {

struct Query {
  QueryId id = 0;
  std::int64_t arrival_us = 0;
  std::int64_t deadline_us = 0;  // arrival_us + SLO
};

}  // namespace lull::core
