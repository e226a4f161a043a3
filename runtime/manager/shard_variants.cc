#include "runtime/manager/shard_variants.h"

namespace lull::manager {

std::vector<ModelVariant> shard_variants(std::vector<ModelVariant> variants, const core::Shard& shard,
                                         int local_workers) {
  for (ModelVariant& v : variants) {
    v.tables = core::shard_library(v.tables, shard, local_workers);
    v.from_qps /= shard.count;
  }
  return variants;
}

}  // namespace lull::manager
