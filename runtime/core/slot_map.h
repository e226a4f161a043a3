#pragma once
// Which worker holds which of the Dispatcher's worker slots (worker_slots.h):
// a worker that comes up takes the lowest free slot, one that is gone frees
// it. One record for `lull serve --autoscale` (manager/serving_autoscaler)
// and `lull simulate --autoscale` (sim/autoscaled_workers), so both place
// workers the same way. Not thread-safe: its owner's lock guards it.
#include <map>
#include <string>
#include <vector>

namespace lull::core {

class SlotMap {
 public:
  explicit SlotMap(int slots) : used_(static_cast<std::size_t>(slots), 0) {}
  int slots() const { return static_cast<int>(used_.size()); }
  // The lowest free slot, now held by `id`; -1 when every slot is taken.
  int take(const std::string& id);
  // The slot `id` holds; -1 if none.
  int slot_of(const std::string& id) const;
  // Frees `id`'s slot and returns it; -1 if it held none.
  int release(const std::string& id);
  // The workers holding a slot, by id.
  const std::map<std::string, int>& holders() const { return slot_of_; }

 private:
  std::vector<char> used_;
  std::map<std::string, int> slot_of_;
};

}  // namespace lull::core
