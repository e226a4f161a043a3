#pragma once
// The documented ranges of lull's inputs (docs/user-guide.md, "Limits"), in
// one place: the compiler's spec and profile checks, the runtime's policy
// loader and trace reader, and the CLI's option checks all read them, so a
// value one stage accepts is never one another stage crashes or runs away on.
#include <cstddef>
#include <cstdint>

namespace lull::limits {

inline constexpr double kMaxSloMs = 3.6e6;              // 1 hour
inline constexpr double kMaxLatencySloMultiple = 1000;  // a profiled latency sample: at most 1000 x the SLO
inline constexpr double kMaxLoadQps = 1e6;              // per policy / trace rate
inline constexpr unsigned kMaxBatch = 4096;             // profile batch sizes
inline constexpr int kMaxWorkers = 100000;              // a phase-capped compile's cost does not grow with it
inline constexpr int kMaxIntervals = 10000;             // FLD slack intervals D
inline constexpr int kMaxHorizon = 1000000;             // value-iteration steps
inline constexpr double kMaxTraceSeconds = 86400;       // trace lengths, arrival times (1 day)
inline constexpr double kMaxTraceQueries = 1e9;         // QPS x seconds of a constant trace
inline constexpr double kMaxIntervalMs = 3.6e6;         // timeouts, windows (1 hour)
inline constexpr int kMinHealthIntervalMs = 10;
inline constexpr int kMaxThreads = 1024;
inline constexpr int kMaxConnections = 100000;   // serve --max-connections (each one is a descriptor)
inline constexpr int kMaxSamples = 1000000;      // lull profile --samples / --warmup per batch size
inline constexpr int kMaxInputBytes = 64 << 20;  // synthetic request bodies (loadgen, bench serve)
inline constexpr std::size_t kMaxBodyBytes = std::size_t{1} << 30;  // serve --max-body-bytes (each body is buffered)

}  // namespace lull::limits
