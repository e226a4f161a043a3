#pragma once
// lull_shard_info{shard="I/G"} 1: which shard of a sharded fleet this
// process is (docs/operators-guide.md "Shards"). An info gauge, as lull_build_info,
// rather than a label on every series: the series keep their names and
// labels whether sharded or not, a scraper's target labels already tell the
// processes apart, and a query that wants the shard joins it in
// (`... * on(instance) group_left(shard) lull_shard_info`).
#include <string>

#include "runtime/core/shard.h"

namespace lull::session {

std::string render_shard_info(const core::Shard& shard);

}  // namespace lull::session
