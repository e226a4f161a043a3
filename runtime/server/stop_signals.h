#pragma once
// SIGINT, SIGTERM and SIGHUP for `lull serve`, in every phase (start-up,
// serving, stopping): blocked in every thread (construct it before any
// thread starts, so all inherit the mask) and received by one watcher
// thread. A stop signal is recorded and runs what asked to be told; blocking
// waits elsewhere (the first workers' start-up) subscribe and end at once,
// instead of the signal waiting until the main thread reaches a sigwait.
// SIGHUP runs the hang-up subscribers (the policy reload) and is otherwise
// ignored: it never stops lull.
// A second SIGINT or SIGTERM while lull stops ends it at once (exit status
// 128 + the signal), skipping what is left of the orderly stop (workers'
// drain and grace period, the pools' clean-up), as systemd's and
// Kubernetes' users expect of a second signal; a local worker dies with lull
// (SIGKILL, child_process.cc). Accepted queries are not lost to it: while a
// hold_forced_exit() hold exists (the front end writing the answers that the
// stop gave every waiting query), the exit waits for it to go.
#include <signal.h>

#include <condition_variable>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace lull::server {

class StopSignals {
 public:
  StopSignals();   // blocks SIGINT and SIGTERM in the calling thread, starts the watcher
  ~StopSignals();  // ends the watcher (no callback runs afterwards)
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Runs `on_stop` (on the watcher thread) when a stop signal arrives, or at
  // once if one already has, until the returned subscription goes; its
  // destructor waits for a callback in progress. `on_stop` must be quick.
  class Subscription {
   public:
    Subscription(StopSignals* owner, std::list<std::function<void()>>* list,
                 std::list<std::function<void()>>::iterator it)
        : owner_(owner), list_(list), it_(it) {}
    Subscription(Subscription&& o) noexcept : owner_(o.owner_), list_(o.list_), it_(o.it_) { o.owner_ = nullptr; }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    Subscription& operator=(Subscription&&) = delete;
    ~Subscription();

   private:
    StopSignals* owner_;
    std::list<std::function<void()>>* list_;
    std::list<std::function<void()>>::iterator it_;
  };
  [[nodiscard]] Subscription subscribe(std::function<void()> on_stop);
  // Runs `on_hangup` on the watcher thread at each SIGHUP until the returned
  // subscription goes. A stop signal that arrives meanwhile is taken after it.
  [[nodiscard]] Subscription on_hangup(std::function<void()> on_hangup);

  // Defers a forced exit (a second stop signal) until release() or the
  // hold's end.
  class ExitHold {
   public:
    explicit ExitHold(StopSignals* owner) : owner_(owner) {}
    ExitHold(ExitHold&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    ExitHold(const ExitHold&) = delete;
    ExitHold& operator=(const ExitHold&) = delete;
    ExitHold& operator=(ExitHold&&) = delete;
    ~ExitHold() { release(); }
    void release();

   private:
    StopSignals* owner_;
  };
  [[nodiscard]] ExitHold hold_forced_exit();

  // Blocks until a stop signal; returns it.
  int wait();
  // The signal received, 0 if none yet.
  int received();

 private:
  void watch();

  sigset_t set_;
  std::mutex mu_;  // also held while callbacks run, so unsubscribing waits for them
  std::condition_variable cv_;
  int signal_ = 0;
  bool closing_ = false;
  int exit_holds_ = 0;
  std::list<std::function<void()>> callbacks_;
  std::list<std::function<void()>> hangup_callbacks_;
  std::thread watcher_;
};

}  // namespace lull::server
