#pragma once
// Wall time since the process started, as the user waits for it: main()
// marks the start before anything else runs, and commands report totals
// from that mark (not from when their own work began).
namespace lull::cli {

void mark_process_start();  // first thing in main()
double seconds_since_process_start();

}  // namespace lull::cli
