#pragma once
// cpp-httplib's Server with one change: how a kept-alive connection waits for
// its next request. httplib 0.11 polls an idle connection in 10 ms selects
// with a 1 ms sleep between them, so a request that lands during a sleep
// waits up to a millisecond (longer on a busy machine) before anyone reads
// it; about one request in eleven on an idle connection paid that, which
// showed up in lull's p90-p99 overhead. Here the handler thread blocks in
// poll() until the socket is readable, so a request is read the moment it
// arrives. The poll is cut into 100 ms slices only to notice stop().
// Everything else (parsing, routing, limits, 413) is httplib's own code.
#include <httplib.h>

namespace lull::serve {

class KeepAliveServer final : public httplib::Server {
 private:
  // Overrides httplib's per-connection loop (a private virtual, which C++
  // lets a derived class override); called on a task-queue thread.
  bool process_and_close_socket(socket_t sock) override;
};

}  // namespace lull::serve
