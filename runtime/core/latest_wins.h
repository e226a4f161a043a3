#pragma once
// "Only the latest situation matters": work asked for while earlier work
// runs waits, and a newer request replaces the one waiting. One rule, in
// LatestSlot, for both of lull's background compilations:
//   - online compilation (BackgroundPolicyProvider: the latest (workers,
//     load, pattern)) runs on a thread of its own, LatestWins, so the
//     selecting thread that posts never waits for the work;
//   - drift recompilation (serve/drift_recompiler.h: the latest observed
//     latencies) runs as a controller of the server's ControlLoop, whose
//     thread takes from the slot on its tick.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace lull::core {

// The waiting and running items, and the rule between them. Thread-safe.
template <typename T>
class LatestSlot {
 public:
  // `item` waits, replacing the one waiting; unless `same_as_running` says
  // the item in progress is the same already (then returns false).
  bool post(T item, const std::function<bool(const T& running)>& same_as_running = nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (same_as_running && running_ && same_as_running(*running_)) return false;
      waiting_ = std::move(item);
    }
    cv_.notify_all();
    return true;
  }
  void drop_waiting() {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_.reset();
  }
  bool has_waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_.has_value();
  }
  // The waiting item, now the running one; none waiting: nullopt at once.
  std::optional<T> take() {
    std::lock_guard<std::mutex> lock(mu_);
    return take_locked();
  }
  // Blocks until an item waits, then take()s it; nullopt once close()d.
  std::optional<T> wait_take() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return closed_ || waiting_.has_value(); });
    if (closed_) return std::nullopt;
    return take_locked();
  }
  // The running item is done.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_.reset();
      ++finished_;
    }
    cv_.notify_all();
  }
  // Drops the waiting item; wait_take() and wait_idle() return from now on.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      waiting_.reset();
    }
    cv_.notify_all();
  }
  // Blocks until nothing runs or waits (or close()); returns how many items finished.
  int wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return closed_ || (!running_ && !waiting_); });
    return finished_;
  }

 private:
  std::optional<T> take_locked() {
    if (!waiting_) return std::nullopt;
    running_ = std::move(waiting_);
    waiting_.reset();
    return running_;
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<T> waiting_, running_;
  bool closed_ = false;
  int finished_ = 0;
};

// A LatestSlot worked by one background thread of its own.
template <typename T>
class LatestWins {
 public:
  // `work` runs on the thread, one item at a time, without the lock held.
  explicit LatestWins(std::function<void(const T&)> work) : work_(std::move(work)), thread_([this] { run(); }) {}
  // Finishes the item in progress; drops the one waiting.
  ~LatestWins() {
    slot_.close();
    thread_.join();
  }
  LatestWins(const LatestWins&) = delete;
  LatestWins& operator=(const LatestWins&) = delete;

  void post(T item, const std::function<bool(const T& running)>& same_as_running = nullptr) {
    slot_.post(std::move(item), same_as_running);
  }
  void drop_waiting() { slot_.drop_waiting(); }
  int wait_idle() { return slot_.wait_idle(); }

 private:
  void run() {
    while (const std::optional<T> item = slot_.wait_take()) {
      work_(*item);
      slot_.finish();
    }
  }

  std::function<void(const T&)> work_;
  LatestSlot<T> slot_;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace lull::core
