// Workers to Dispatcher slots (why: see slot_map.h).
#include "runtime/core/slot_map.h"

#include <algorithm>

namespace lull::core {

int SlotMap::take(const std::string& id) {
  const auto free = std::find(used_.begin(), used_.end(), 0);
  if (free == used_.end()) return -1;
  *free = 1;
  const int slot = static_cast<int>(free - used_.begin());
  slot_of_[id] = slot;
  return slot;
}

int SlotMap::slot_of(const std::string& id) const {
  const auto it = slot_of_.find(id);
  return it == slot_of_.end() ? -1 : it->second;
}

int SlotMap::release(const std::string& id) {
  const auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return -1;
  const int slot = it->second;
  used_[static_cast<std::size_t>(slot)] = 0;
  slot_of_.erase(it);
  return slot;
}

}  // namespace lull::core
