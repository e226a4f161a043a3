#pragma once
// One background thread that works on the latest thing asked of it: an item
// posted while the thread is busy waits, and a newer one replaces the one
// waiting (only the latest situation matters). Online compilation
// (BackgroundPolicyProvider: the latest (workers, load)) runs on it, so the
// selecting thread that posts never waits for the work. (Drift
// recompilation follows the same rule as a controller of the server's
// ControlLoop: serve/drift_recompiler.h.)
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace lull::runtime {

template <typename T>
class LatestWins {
 public:
  // `work` runs on the thread, one item at a time, without the lock held.
  explicit LatestWins(std::function<void(const T&)> work) : work_(std::move(work)), thread_([this] { run(); }) {}
  // Finishes the item in progress; drops the one waiting.
  ~LatestWins() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      waiting_.reset();
    }
    cv_.notify_all();
    thread_.join();
  }
  LatestWins(const LatestWins&) = delete;
  LatestWins& operator=(const LatestWins&) = delete;

  // `item` waits for the thread, replacing the one waiting; unless
  // `same_as_running` says the item in progress is the same already.
  void post(T item, const std::function<bool(const T& running)>& same_as_running = nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (same_as_running && running_ && same_as_running(*running_)) return;
      waiting_ = std::move(item);
    }
    cv_.notify_all();
  }
  void drop_waiting() {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_.reset();
  }
  // Blocks until nothing runs or waits; returns how many items finished.
  int wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stop_ || (!running_ && !waiting_); });
    return finished_;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || waiting_.has_value(); });
      if (stop_) return;
      running_ = std::move(waiting_);
      waiting_.reset();
      const T item = *running_;
      lock.unlock();
      work_(item);
      lock.lock();
      running_.reset();
      ++finished_;
      cv_.notify_all();
    }
  }

  std::function<void(const T&)> work_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<T> waiting_, running_;
  bool stop_ = false;
  int finished_ = 0;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace lull::runtime
