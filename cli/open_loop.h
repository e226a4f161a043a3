#pragma once
// What `lull loadgen` and `lull bench serve` share: an open-loop arrival
// schedule fixed in advance (so sending never waits on the network), duration
// parsing, and latency percentiles.
#include <cstdint>
#include <string>
#include <vector>

#include "schema/arrival_process.h"
#include "schema/rate_file.h"

namespace lull::cli {

// "30s", "500ms", "2m", or plain seconds; throws UsageError naming `flag`.
double parse_duration_s(const std::string& text, const std::string& flag = "--duration");

// Send times in seconds from the start, in [0, duration_s), whole
// microseconds: `process` at `rate` per second, drawn by the simulator's
// sampler (runtime/sim/arrivals.h), so `lull loadgen` and `lull simulate`
// generate the same arrivals for the same process and seed.
std::vector<double> arrival_schedule(double rate, double duration_s, const ArrivalProcess& process, std::uint64_t seed);
// The same over rate segments (a rate that moves: loadgen --modulation or --rate-file).
std::vector<double> arrival_schedule(const std::vector<RateSegment>& segments, const ArrivalProcess& process,
                                     std::uint64_t seed);

// The p-th percentile (0..100, nearest rank) of latencies in microseconds,
// returned in milliseconds; 0 when empty.
double percentile_ms(std::vector<std::int64_t> latencies_us, double p);

}  // namespace lull::cli
