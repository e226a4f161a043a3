// The front end's lane for large bodies (what and why: decode_lane.h).
#include "runtime/frontend/decode_lane.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>
#include <vector>

namespace lull::frontend {

DecodeLane::~DecodeLane() { stop(); }

void DecodeLane::post(const std::string& client, Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      auto& queue = waiting_[client];
      if (queue.empty()) turns_.push_back(client);
      queue.push_back(std::move(task));
      if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
      wake_.notify_one();
      return;
    }
  }
  task(false);
}

void DecodeLane::loop() {
  // Background work: on a busy host the threads that serve small requests
  // (and the model servers beside lull) run first. Best effort.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kLaneNice);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !turns_.empty(); });
    if (stopping_) return;
    // The next client's oldest body; the client goes to the back of the turns.
    const std::string client = std::move(turns_.front());
    turns_.pop_front();
    auto it = waiting_.find(client);
    Task task = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty())
      waiting_.erase(it);
    else
      turns_.push_back(client);
    lock.unlock();
    task(true);
    task = nullptr;  // what it holds (the body) goes now, not at the next turn
    lock.lock();
  }
}

void DecodeLane::stop() {
  std::vector<Task> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [client, queue] : waiting_)
      for (auto& task : queue) left.push_back(std::move(task));
    waiting_.clear();
    turns_.clear();
  }
  for (auto& task : left) task(false);
}

}  // namespace lull::frontend
