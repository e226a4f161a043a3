-- wrk script for experiments/soak.sh: POSTs a small valid input to
-- lull's /predictions/{task}, paced to a target rate with exponential gaps
-- (Poisson arrivals per wrk thread; a connection waits its slot, so the
-- rate holds while spare connections remain), and counts what came back:
-- status codes, and answers lull itself reports late (X-Lull-Latency-Ms over
-- lull's SLO). done() prints one JSON line, "SOAK_WRK {...}", with those counts,
-- wrk's error counts and its latency percentiles, and the number of
-- requests whose client-side latency exceeded the end-to-end SLO.
-- Arguments (after --): RATE_QPS THREADS LULL_SLO_MS CLIENT_SLO_MS
-- (lull's SLO is the one its policy set was compiled for, the end-to-end
-- one less what is kept for the client <-> lull hop; /metrics counts
-- violations against it).
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
int clock_gettime(int clk_id, soak_timespec *tp);
]]
local ts = ffi.new("soak_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local mean_gap_ms, next_ms
slo_ms, client_slo_ms = nil, nil  -- globals: done() (in wrk's main state) reads them from a thread
ok, late, s503, s504, other = 0, 0, 0, 0, 0

function init(args)
  local rate, nthreads = tonumber(args[1]), tonumber(args[2])
  slo_ms, client_slo_ms = tonumber(args[3]), tonumber(args[4])
  mean_gap_ms = 1000.0 * nthreads / rate
  math.randomseed(1000 + id)
  wrk.method = "POST"
  wrk.body = "soak-input-0123456789"
  wrk.headers["Content-Type"] = "application/octet-stream"
  next_ms = now_ms()
end

function delay()
  local t = now_ms()
  -- The next arrival of this thread's Poisson process; a backlog of more
  -- than a second (all connections busy) is dropped rather than burst.
  next_ms = math.max(next_ms, t - 1000) - math.log(1 - math.random()) * mean_gap_ms
  local d = next_ms - t
  if d < 0 then return 0 end
  return math.floor(d)
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
    local lat = tonumber(headers["X-Lull-Latency-Ms"] or headers["x-lull-latency-ms"] or "0")
    if lat > slo_ms then late = late + 1 end
  elseif status == 503 then
    s503 = s503 + 1
  elseif status == 504 then
    s504 = s504 + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local t = {ok = 0, late = 0, s503 = 0, s504 = 0, other = 0}
  for _, thread in ipairs(threads) do
    for k, _ in pairs(t) do t[k] = t[k] + thread:get(k) end
  end
  -- Client-side late: the share of wrk's latency histogram above the SLO,
  -- found by bisecting on the percentile (latency(i) is quadratic to walk).
  local slo_us, lo, hi = threads[1]:get("client_slo_ms") * 1000, 0.0, 100.0
  if latency.max <= slo_us then lo = 100.0 end
  for _ = 1, 40 do
    local mid = (lo + hi) / 2
    if latency:percentile(mid) <= slo_us then lo = mid else hi = mid end
  end
  local client_late = math.floor((100.0 - lo) / 100.0 * summary.requests + 0.5)
  local e = summary.errors
  io.write(string.format(
      'SOAK_WRK {"requests": %d, "duration_us": %d, "ok": %d, "lull_late": %d, "s503": %d, "s504": %d, "other": %d, ' ..
      '"client_late": %d, "err_connect": %d, "err_read": %d, "err_write": %d, "err_status": %d, "err_timeout": %d, ' ..
      '"p50_ms": %.3f, "p99_ms": %.3f, "p999_ms": %.3f, "max_ms": %.3f}\n',
      summary.requests, summary.duration, t.ok, t.late, t.s503, t.s504, t.other, client_late, e.connect, e.read,
      e.write, e.status, e.timeout, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
      latency:percentile(99.9) / 1000, latency.max / 1000))
end
