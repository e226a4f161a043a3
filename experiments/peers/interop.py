#!/usr/bin/python3
"""lull against real peers: KServe 0.12.1's ModelServer and MLServer 1.3.5
behind `lull serve --backend v2`, Triton's Python HTTP client and KServe's
REST client in front of lull's v2 front end. Each capability pass or fail,
printed as the Markdown table of docs/operators-guide.md ("Interop with real peers").

The peers' sources are fetched by hand outside this repository (their code
never enters it; CI keeps the stand-ins), into PEERS_DEPS (default
/work/peers): kserve-0.12.1/python/kserve (tag v0.12.1), kserve-head/python/
kserve (for its REST client), mlserver-1.3.5 (tag 1.3.5), triton-client
(src/python/library), cloudevents (sdk-python 1.11.0), timing-asgi (v0.3.1),
starlette_exporter (v0.17.1), py-grpc-prometheus (v0.7.0); Debian packages as
docs/operators-guide.md ("Interop with real peers") names them; the Debian packages: python3-fastapi python3-pydantic python3-uvicorn python3-httpx python3-geventhttpclient python3-rapidjson python3-aiohttp python3-kubernetes python3-deprecation python3-dotenv python3-importlib-resources python3-pandas. Run from the repository root after building:

  /usr/bin/python3 experiments/peers/interop.py --lull build/lull [--poison-seconds 60] [--json OUT]

Exit 0 when every row passes that is expected to (the table marks the rest).
Everything runs on loopback ports it picks; every process it starts it stops.
"""
import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import types
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEPS = os.environ.get("PEERS_DEPS", "/work/peers")
PY = "/usr/bin/python3"
TASK = "image-classification"
# Models of test/data/replay_profile.json; two declare inputs not named "input".
NAMES = "tiny_net=INPUT0,small_net=input_1"
DECLARED_NAMES = True  # --peers-input-named-input clears it (a lull without per-model names can start)
IMAGE = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0xFF, 0xFE, 0x80, 1])  # 13 bytes, not UTF-8

procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, log):
    p = subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=ROOT)
    procs.append(p)
    return p


def wait_http(url, seconds=30):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except urllib.error.HTTPError:
            return True
        except Exception:
            time.sleep(0.2)
    return False


def wait_models(server, seconds=60):
    """Until every model of the peer answers ready (MLServer loads them after it listens)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if all(urllib.request.urlopen(f"{server}/v2/models/{m}/ready", timeout=2).status == 200
                   for m in ("tiny_net", "small_net", "medium_net", "large_net")):
                return True
        except Exception:
            pass
        time.sleep(0.3)
    return False


def post(url, body, headers=None):
    req = urllib.request.Request(url, data=body if isinstance(body, bytes) else json.dumps(body).encode(),
                                 headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def peer(kind, tmp):
    port = free_port()
    names = NAMES if DECLARED_NAMES else ""
    script = "kserve_peer.py" if kind == "kserve" else "mlserver_peer.py"
    extra = ["--reload-delay-s", "3"] if kind == "mlserver" else []
    start([PY, os.path.join(HERE, script), "--port", str(port), "--models", "tiny_net,small_net,medium_net,large_net",
           "--input-names", names] + extra, os.path.join(tmp, f"{kind}-{port}.log"))
    return f"http://127.0.0.1:{port}"


def lull_serve(lull, servers, policies, tmp, tag):
    port = free_port()
    p = start([lull, "serve", "--backend", "v2", "--policies", policies, "--servers", ",".join(servers),
               "--listen", f"127.0.0.1:{port}"], os.path.join(tmp, f"lull-{tag}.log"))
    base = f"http://127.0.0.1:{port}"
    ok = wait_http(base + "/v2/health/live", 20) and p.poll() is None
    return base, ok, os.path.join(tmp, f"lull-{tag}.log")


def server_rows(kind, lull, policies, tmp, poison_seconds):
    rows = []
    servers = [peer(kind, tmp), peer(kind, tmp)]
    for s in servers:
        wait_models(s)
    base, up, log = lull_serve(lull, servers, policies, tmp, kind)
    what = ("starts: every model ready; models declaring INPUT0, input_1 sent under those names, no flag"
            if DECLARED_NAMES else "starts: every model ready (every model's input named input)")
    rows.append((what, up, "" if up else open(log).read()[-300:]))
    if not up:
        return rows
    st, body = post(base + f"/predictions/{TASK}", b"hello", {"Content-Type": "application/octet-stream"})
    rows.append(("text query (/predictions) answered by the model", st == 200 and b'"class": 5' in body,
                 f"{st} {body[:80]!r}"))
    classes = set()
    for _ in range(8):  # several models get a turn
        st, body = post(base + f"/v2/models/{TASK}/infer",
                        {"inputs": [{"name": "input", "shape": [1], "datatype": "BYTES", "data": ["abc"]}]})
        classes.add((st, json.loads(json.loads(body)["outputs"][0]["data"][0])["class"] if st == 200 else -1))
    rows.append(("BYTES [1] through /v2, every model", classes == {(200, 3)}, str(sorted(classes))))
    st, body = post(base + f"/predictions/{TASK}", IMAGE, {"Content-Type": "application/octet-stream"})
    whole = st == 200 and json.loads(body).get("class") == len(IMAGE) % 10
    rows.append(("13 bytes that are not UTF-8 reach the model whole (base64 + content_type)", whole,
                 f"{st} {body[:80]!r}" + ("" if whole else " (the server hands the model base64 text)")))
    st, body = post(base + f"/v2/models/{TASK}/infer",
                    {"inputs": [{"name": "input", "shape": [4, 3], "datatype": "FP32", "data": list(range(12))}]})
    out = json.loads(body)["outputs"][0] if st == 200 else {}
    rows.append(("client tensor [4, 3] FP32: 4 rows back", st == 200 and out.get("data") == [3, 12, 21, 30],
                 f"{st} {out.get('shape')} {out.get('data')}"))
    st, body = post(base + f"/v2/models/{TASK}/infer",
                    {"inputs": [{"name": "input", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3, 4]},
                                {"name": "b", "shape": [1], "datatype": "FP32", "data": [1]}]})
    rows.append(("inputs without a common batch dimension: 400 saying what is accepted",
                 st == 400 and b"lull takes each input as [B, ...]" in body, f"{st} {body[:90]!r}"))
    if kind == "mlserver":
        rows.append(reload_row(base, servers[0], tmp))
    res = os.path.join(tmp, f"poison-{kind}.json")
    rc = subprocess.call([PY, os.path.join(HERE, "poison.py"), "--lull", base, "--qps", "40", "--seconds",
                          str(poison_seconds), "--every", "20", "--json", res], stdout=subprocess.DEVNULL)
    c = json.load(open(res))
    rows.append((f"poison: 1 bad input per 20 at 40 qps for {poison_seconds} s", rc == 0,
                 f"good {c['good_ok']}/{c['good']} ok, bad {c['bad_model_4xx']}/{c['bad']} got the model's 4xx, "
                 f"lost {c['lost']}"))
    return rows


def reload_row(base, server, tmp):
    """MLServer reloads every model on one worker (unload, then a 3 s load during
    which it answers 400 "Model M is not ready yet.") under 40 qps: every query 200."""
    import threading
    models = ("tiny_net", "small_net", "medium_net", "large_net")

    def reload():
        for m in models:
            post(f"{server}/v2/repository/models/{m}/unload", b"{}")
        loads = [threading.Thread(target=post, args=(f"{server}/v2/repository/models/{m}/load", b"{}"))
                 for m in models]
        for t in loads:
            t.start()
        for t in loads:
            t.join()
    res = os.path.join(tmp, "reload-mlserver.json")
    poison = subprocess.Popen([PY, os.path.join(HERE, "poison.py"), "--lull", base, "--qps", "40", "--seconds", "12",
                               "--every", "0", "--json", res], stdout=subprocess.DEVNULL)
    time.sleep(3)
    reload()
    rc = poison.wait()
    c = json.load(open(res))
    return ("one worker's models reloaded (not ready: 400) under 40 qps: every query 200", rc == 0,
            f"{c['good_ok']}/{c['good']} ok, lost {c['lost']}, {c['examples'][:1]}")


def attempt(rows, what, fn):
    """One row: fn() -> (ok, detail); an exception is a FAIL with its message."""
    try:
        ok, detail = fn()
    except Exception as e:  # the client's own error: what the peer met
        ok, detail = False, f"{type(e).__name__}: {str(e)[:100]}"
    rows.append((what, ok, detail))


def triton_rows(base):
    sys.path.insert(0, os.path.join(DEPS, "triton-client/src/python/library"))
    import numpy as np
    import tritonclient.http as httpclient
    from tritonclient.utils import InferenceServerException
    rows = []
    c = httpclient.InferenceServerClient(base.replace("http://", ""))
    attempt(rows, "live, ready, model ready",
            lambda: (c.is_server_live() and c.is_server_ready() and c.is_model_ready(TASK), ""))

    def meta():
        m = c.get_model_metadata(TASK)
        return m.get("name") == TASK, json.dumps(m)[:80]
    attempt(rows, "model metadata", meta)

    def one(data, binary, dtype="BYTES", **kw):
        i = httpclient.InferInput("input", list(data.shape), dtype)
        i.set_data_from_numpy(data, binary_data=binary)
        return c.infer(TASK, [i], **kw)

    def text(binary):
        r = one(np.array([b"hello"], dtype=np.object_), binary)
        out = str(r.as_numpy("output")[0])
        return '"class": 5' in out, out[:60]
    attempt(rows, "BYTES as JSON", lambda: text(False))
    attempt(rows, "BYTES binary (the client's default)", lambda: text(True))

    def image():
        got = json.loads(one(np.array([IMAGE], dtype=np.object_), True).as_numpy("output")[0])
        return got["class"] == len(IMAGE) % 10, json.dumps(got)
    attempt(rows, "an image (bytes that are not UTF-8), binary: the model's answer", image)

    def rows43(binary):
        out = list(one(np.arange(12, dtype=np.float32).reshape(4, 3), binary, "FP32").as_numpy("output"))
        return out == [3, 12, 21, 30], str(out)
    attempt(rows, "FP32 [4, 3] as JSON: 4 rows", lambda: rows43(False))
    attempt(rows, "FP32 [4, 3] binary: 4 rows", lambda: rows43(True))

    def bad():
        try:
            one(np.array([b"poison"], dtype=np.object_), True)
            return False, "no error"
        except InferenceServerException as e:
            return e.status() == "400" and "poison" in e.message(), f"{e.status()} {e.message()[:60]}"
    attempt(rows, "a bad input: the model's 400 raised", bad)
    attempt(rows, "gzip request body",
            lambda: text_kw(one, np, request_compression_algorithm="gzip"))

    def unknown_output():
        try:
            one(np.array([b"hello"], dtype=np.object_), False, outputs=[httpclient.InferRequestedOutput("nope")])
            return False, "200"
        except InferenceServerException as e:
            return e.status() == "400" and "'nope'" in e.message(), f"{e.status()} {e.message()[:70]}"
    attempt(rows, "unknown requested output: 400 naming it", unknown_output)

    def known_output():
        r = one(np.array([b"hello"], dtype=np.object_), True, outputs=[httpclient.InferRequestedOutput("output")])
        out = str(r.as_numpy("output")[0])
        return '"class": 5' in out, out[:60]
    attempt(rows, "requested output 'output' (binary request): answered", known_output)
    return rows


def text_kw(one, np, **kw):
    out = str(one(np.array([b"hello"], dtype=np.object_), True, **kw).as_numpy("output")[0])
    return '"class": 5' in out, out[:60]


def kserve_client_rows(base):
    sys.path[:0] = [os.path.join(HERE, "stubs"), os.path.join(DEPS, "cloudevents"), os.path.join(DEPS, "timing-asgi")]
    src = os.path.join(DEPS, "kserve-head/python/kserve/kserve")
    m = types.ModuleType("kserve")
    m.__path__ = [src]
    sys.modules["kserve"] = m  # the client without the package's __init__ (pydantic 2 there)
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    from kserve.inference_client import InferenceRESTClient, RESTConfig
    from kserve.protocol.infer_type import InferInput, InferRequest
    rows = []
    c = InferenceRESTClient(RESTConfig(protocol="v2"))
    loop = asyncio.new_event_loop()
    run = loop.run_until_complete

    async def ready():
        return (await c.is_server_live(base) and await c.is_server_ready(base)
                and await c.is_model_ready(base, TASK)), ""
    attempt(rows, "live, ready, model ready", lambda: run(ready()))

    async def infer(data, dtype, binary):
        i = InferInput("input", list(data.shape), dtype)
        i.set_data_from_numpy(data, binary_data=binary)
        r = await c.infer(base, InferRequest(model_name=TASK, infer_inputs=[i]), model_name=TASK)
        return r.outputs[0].data
    for binary in (False, True):
        attempt(rows, f"BYTES {'binary (the default)' if binary else 'as JSON'}",
                lambda b=binary: (lambda d: ('"class": 5' in str(d[0]), str(d[0])[:60]))(
                    run(infer(np.array([b"hello"], dtype=np.object_), "BYTES", b))))
    attempt(rows, "FP32 [4, 3] binary: 4 rows",
            lambda: (lambda d: (list(d) == [3, 12, 21, 30], str(d)))(
                run(infer(np.arange(12, dtype=np.float32).reshape(4, 3), "FP32", True))))
    run(c.close())
    loop.close()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lull", default=os.path.join(ROOT, "build/lull"))
    ap.add_argument("--poison-seconds", type=int, default=10)
    ap.add_argument("--json")
    ap.add_argument("--peers-input-named-input", action="store_true",
                    help="every peer model's input named 'input' (for a lull that cannot read names per model)")
    a = ap.parse_args()
    global DECLARED_NAMES
    DECLARED_NAMES = not a.peers_input_named_input
    tmp = tempfile.mkdtemp(prefix="lull-interop-")
    policies = os.path.join(tmp, "v2.pb")
    subprocess.check_call([a.lull, "compile", "--profiles", "test/data/replay_profile.json", "--slo-ms", "70",
                           "--workers", "2", "--load-qps", "5:60:5", "--percentile", "100", "--out", policies],
                          cwd=ROOT, stdout=subprocess.DEVNULL)
    table = []
    try:
        for kind, label in (("kserve", "KServe 0.12.1 ModelServer"), ("mlserver", "MLServer 1.3.5")):
            table += [(label + " behind lull", *r) for r in server_rows(kind, a.lull, policies, tmp, a.poison_seconds)]
        # In front: lull over MLServer (it decodes base64 bytes, so an image arrives whole).
        servers = [peer("mlserver", tmp), peer("mlserver", tmp)]
        for server in servers:
            wait_models(server)
        base, up, log = lull_serve(a.lull, servers, policies, tmp, "front")
        if not up:
            raise SystemExit("lull serve (in front) did not start: " + open(log).read()[-400:])
        table += [("Triton client (HEAD) in front", *r) for r in triton_rows(base)]
        table += [("KServe REST client (HEAD) in front", *r) for r in kserve_client_rows(base)]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    print("| peer | capability | result | detail |\n|---|---|---|---|")
    for peer_name, what, ok, detail in table:
        print(f"| {peer_name} | {what} | {'pass' if ok else 'FAIL'} | {str(detail).replace('|', '/')[:120]} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([dict(peer=p, capability=w, ok=bool(o), detail=str(d)) for p, w, o, d in table], f, indent=1)
    expected_fail = ("expected to fail", "reach the model whole")
    return 0 if all(ok or any(e in what for e in expected_fail) for _, what, ok, _ in table) else 1


if __name__ == "__main__":
    sys.exit(main())
