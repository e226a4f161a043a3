#!/usr/bin/python3
"""Clients for cli.v2_large_bodies (v2_large_bodies_test.sh): BIG processes
each looping POSTs of a ~3.8 MB v2 inference body to lull over one kept-alive
connection (at nice 10: they stand for other machines), while this process sends a small v2 query and a GET /ping, each
on a new connection, SMALL_QPS times a second for SECONDS. Prints one JSON
line: the small queries' and pings' status counts and latencies (ms), and
how many big bodies were answered, by status.

Usage: v2_large_bodies_clients.py PORT TASK BIG SECONDS SMALL_QPS KIND
KIND: "valid" (answered by the models) or "refused" (the same bytes, decoded
in full and refused at the end: a batch of more rows than lull takes).
"""
import http.client
import json
import multiprocessing
import os
import sys
import time


def big_body(kind, variant):
    # Even clients: INT8, odd: FP32; ~3.8 MB each.
    datatype = "INT8" if variant % 2 == 0 else "FP32"
    ones = ",".join(["1"] * 1900000)
    if kind == "refused":  # 1.9 M elements in 5000 rows: decoded in full, then refused (over 4096 rows)
        return ('{"inputs":[{"name":"x","datatype":"%s","shape":[5000,380],"data":[%s]}]}' % (datatype, ones)).encode()
    if variant % 2 == 0:  # 66,000 inputs of one element
        return ('{"inputs":[%s]}' % ",".join('{"name":"i%d","datatype":"INT8","shape":[1],"data":[1]}' % i
                                             for i in range(66000))).encode()
    return ('{"inputs":[{"name":"x","datatype":"FP32","shape":[1,1900000],"data":[%s]}]}' % ones).encode()


def big_client(port, task, seconds, kind, variant, out, ready):
    # The load generators are not what is measured: deployed, they are other
    # machines; here they share the cores with lull and the model servers.
    os.nice(10)
    body = big_body(kind, variant)
    ready.release()
    codes = {}
    end = time.monotonic() + seconds
    conn = None
    while time.monotonic() < end:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/v2/models/%s/infer" % task, body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            codes[str(r.status)] = codes.get(str(r.status), 0) + 1
        except Exception as e:  # counted; a new connection next time
            codes[type(e).__name__] = codes.get(type(e).__name__, 0) + 1
            conn = None
    out.put((len(body), codes))


def timed(port, method, path, body=None):
    t0 = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Content-Type": "application/json"} if body else {}
        conn.request(method, path, body, headers)
        r = conn.getresponse()
        r.read()
        conn.close()
        status = str(r.status)
        lull_ms = float(r.getheader("X-Lull-Latency-Ms") or "nan")
    except Exception as e:
        status = type(e).__name__
        lull_ms = float("nan")
    return status, (time.monotonic() - t0) * 1000.0, lull_ms


def main():
    port, task, big, seconds, qps, kind = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
                                           float(sys.argv[5]), sys.argv[6])
    out = multiprocessing.Queue()
    ready = multiprocessing.Semaphore(0)
    procs = [multiprocessing.Process(target=big_client, args=(port, task, seconds + 1, kind, i, out, ready))
             for i in range(big)]
    for p in procs:
        p.start()
    for _ in procs:  # bounded: each big client has built its body and starts looping
        ready.acquire(timeout=120)
    small = '{"inputs":[{"name":"input","datatype":"BYTES","shape":[1],"data":["hello"]}]}'
    results = {"query": [], "ping": []}
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        results["query"].append(timed(port, "POST", "/v2/models/%s/infer" % task, small))
        results["ping"].append(timed(port, "GET", "/ping"))
        n += 1
        wait = start + n / qps - time.monotonic()
        if wait > 0:
            time.sleep(wait)  # pacing of the small client, not a judgement
    bigs = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
    report = {"big_bytes": sorted({b for b, _ in bigs}), "big": {}}
    for _, codes in bigs:
        for c, k in codes.items():
            report["big"][c] = report["big"].get(c, 0) + k
    def p(times, q):
        return times[min(len(times) - 1, int(q * len(times)))] if times else float("nan")

    for kind_, rows in results.items():
        codes = {}
        for s, _, _ in rows:
            codes[s] = codes.get(s, 0) + 1
        times = sorted(t for _, t, _ in rows)
        report[kind_] = {"codes": codes, "n": len(times), "p50_ms": p(times, 0.5), "p99_ms": p(times, 0.99),
                         "max_ms": times[-1]}
        if kind_ == "query":  # lull's own latency (X-Lull-Latency-Ms: header complete to answer)
            lull = sorted(l for _, _, l in rows if l == l)
            report[kind_].update({"lull_p50_ms": p(lull, 0.5), "lull_p99_ms": p(lull, 0.99)})
    print(json.dumps(report))


if __name__ == "__main__":
    main()
