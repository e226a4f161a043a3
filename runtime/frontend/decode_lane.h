#pragma once
// Where the front end decodes large request bodies: off the I/O threads, one
// body at a time, the clients taking turns. A v2 inference request's decode
// costs CPU in proportion to its body (~10-30 ms for 4 MB); on the I/O
// threads, four clients looping such bodies would hold both of them, and
// /ping, /metrics and every other client's small queries would wait behind
// them. Here:
//   - a body of at most kInlineDecodeBytes is decoded at once on its I/O
//     thread (microseconds), never behind a large one;
//   - larger bodies wait in one queue per client (its IP address) and are
//     decoded by one thread, taking the clients in turn: a client's large
//     body waits for at most one decode per other client with a large body
//     waiting, however many that client or others have queued, and large
//     bodies together use at most one core for decoding, at a lower CPU
//     priority (nice kLaneNice) than the threads that serve the rest.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace lull::frontend {

inline constexpr std::size_t kInlineDecodeBytes = 64 * 1024;
inline constexpr int kLaneNice = 10;

class DecodeLane {
 public:
  // `run` is false when the lane stopped before the task's turn: the task
  // then answers without decoding (the server is stopping).
  using Task = std::function<void(bool run)>;
  DecodeLane() = default;
  ~DecodeLane();  // stop()
  // Queues `task` behind `client`'s earlier ones; the thread starts on the first.
  void post(const std::string& client, Task task);
  // Runs no task past the one in progress: every waiting one (and any posted
  // later) runs with run == false, on the caller's thread. Idempotent.
  void stop();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, std::deque<Task>> waiting_;  // by client; no empty queue
  std::deque<std::string> turns_;                    // the clients in waiting_, next first
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace lull::frontend
