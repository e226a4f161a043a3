#pragma once
// One number out of a command-line field or a trace file's field, whole and
// finite, or std::invalid_argument("WHAT: 'TEXT' is not a number"). Shared by
// the --trace reader and the worker-event flags; the rate-file parser
// (schema/rate_file.h, shared with the planner) holds the implementation.
#include <string>

#include "schema/rate_file.h"

namespace lull::sim {

inline double parse_number_field(const std::string& s, const std::string& what) {
  return parse_trace_number(s, what);  // schema/rate_file.h: the one implementation
}

}  // namespace lull::sim
