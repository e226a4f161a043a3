#!/usr/bin/python3
"""Poison test: a steady stream of queries to lull's v2 front end in which
every Nth input is one the model refuses (it holds "poison": peer_models.py's
models refuse the WHOLE request that carries it, as KServe, MLServer and Triton
do). Checks that no good query fails, that every bad one gets the model's own
4xx and message, and that every query is answered.

  /usr/bin/python3 experiments/peers/poison.py --lull http://127.0.0.1:8170 \
      --task image-classification --qps 40 --seconds 60 --every 20 [--json OUT]

Exit 0 when all three hold, 1 otherwise. Standard library only.
"""
import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def send(url, text, timeout):
    body = json.dumps({"inputs": [{"name": "input", "shape": [1], "datatype": "BYTES", "data": [text]}]}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace"), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace"), dict(e.headers)
    except Exception as e:  # no answer at all: lost
        return 0, f"{type(e).__name__}: {e}", {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lull", default="http://127.0.0.1:8170")
    ap.add_argument("--task", default="image-classification")
    ap.add_argument("--qps", type=float, default=40)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--every", type=int, default=20, help="one bad input per this many (0: none)")
    ap.add_argument("--timeout", type=float, default=35)
    ap.add_argument("--json", help="write the counts here")
    a = ap.parse_args()
    url = f"{a.lull}/v2/models/{a.task}/infer"
    n = int(a.qps * a.seconds)
    results = [None] * n
    lock = threading.Lock()
    latencies = {False: [], True: []}  # client-side ms, good and bad queries

    def one(i):
        bad = a.every > 0 and i % a.every == a.every - 1
        text = f"poison-{i}" if bad else f"query-{i}"
        t0 = time.monotonic()
        status, body, headers = send(url, text, a.timeout)
        ms = (time.monotonic() - t0) * 1e3
        with lock:
            results[i] = (bad, status, body, headers.get("X-Lull-Retried", ""))
            latencies[bad].append(ms)

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=128) as pool:
        for i in range(n):
            delay = start + i / a.qps - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, i)
    counts = {"sent": n, "good": 0, "good_ok": 0, "good_failed": 0, "bad": 0, "bad_model_4xx": 0,
              "bad_other": 0, "lost": 0, "retried": 0, "examples": []}
    for i, (bad, status, body, retried) in enumerate(results):
        counts["retried"] += retried == "true"
        if status == 0:
            counts["lost"] += 1
        if bad:
            counts["bad"] += 1
            msg = ""
            try:
                msg = json.loads(body).get("error", "")
            except ValueError:
                pass
            if 400 <= status < 500 and "poison" in msg:
                counts["bad_model_4xx"] += 1
            else:
                counts["bad_other"] += 1
                if len(counts["examples"]) < 5:
                    counts["examples"].append(f"bad query {i}: HTTP {status} {body[:200]}")
        else:
            counts["good"] += 1
            if status == 200:
                counts["good_ok"] += 1
            else:
                counts["good_failed"] += 1
                if len(counts["examples"]) < 5:
                    counts["examples"].append(f"good query {i}: HTTP {status} {body[:200]}")
    counts["seconds"] = round(time.monotonic() - start, 1)
    for bad, name in ((False, "good"), (True, "bad")):
        v = sorted(latencies[bad])
        if v:
            counts[f"{name}_ms_p50"] = round(v[len(v) // 2], 1)
            counts[f"{name}_ms_p99"] = round(v[min(len(v) - 1, int(len(v) * 0.99))], 1)
    ok = counts["good_failed"] == 0 and counts["bad_other"] == 0 and counts["lost"] == 0
    counts["pass"] = ok
    print(json.dumps(counts, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(counts, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
