#pragma once
// --variant-sets in a lull shard (docs/operators-guide.md "Shards"): each variant as
// the shard serves it. Its tables are core::shard_library's view (K
// workers at a G-th of the load), and its boundary from_qps, a global load,
// becomes a G-th too, since the shard's variant controller measures its own
// share of the arrivals: at its load L/G it picks the variant one lull of
// G*K workers picks at L.
#include <vector>

#include "runtime/manager/variant_switcher.h"
#include "runtime/core/shard.h"

namespace lull::manager {

// Throws std::invalid_argument (core::shard_library's) when a variant has
// no table for `local_workers` (0: any count, a pool picks it).
std::vector<ModelVariant> shard_variants(std::vector<ModelVariant> variants, const core::Shard& shard,
                                         int local_workers);

}  // namespace lull::manager
