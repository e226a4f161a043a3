#!/usr/bin/python3
"""A small TorchServe-API-compatible model server: a STAND-IN for TorchServe.

TorchServe is not packaged in Debian, so lull's tests and demo run this server
instead. It speaks the parts of TorchServe's APIs lull uses, on one port:

  GET  /ping                  -> {"status": "Healthy"}
  GET  /models                -> {"models": [{"modelName": ..., "modelUrl": ...}]}
  GET  /models/{name}         -> [{"modelName": ..., "workers": [{"status": "READY"}], ...}] or 404
  POST /models?url=...        -> register (load) a model; DELETE /models/{name} unregisters it
                                 (TorchServe's management API: management.py, with the
                                 --store-fake, --fail-load and --load-delay-ms options)
  POST /predictions/{model}   -> lull's batch contract (packaging/torchserve/lull_batch_contract.py)
                                 for application/json bodies; any other body is ONE raw input
                                 and gets its bare prediction (TorchServe's single-input form).
                                 Inputs the model rejects (the contract's MALFORMED_MARKER for
                                 every model; undecodable PNG/JPEG for real ones) get a per-input
                                 error in a batch, or 400 {"code","type","message"} alone, as
                                 the TorchServe handler answers them.

It speaks the Open Inference Protocol (KServe v2) on the same port too:
/v2/health/live|ready, /v2/models/{model}[/ready|/infer], the model
repository extension's load and unload (v2_api.py says what and how).

Like one TorchServe worker on one device, it runs one forward pass at a time;
concurrent requests queue. On a real TorchServe, runtime/upstream/torchserve/
lull_batch_handler.py implements the same contract.

With --token-file KEY_FILE.json (TorchServe's key_file.json format:
{"management": {"key": ...}, "inference": {"key": ...}, "API": {"key": ...}}) it
enforces token authorization like TorchServe: /predictions needs
"Authorization: Bearer <inference key>", /models needs the management key
(one port serves both here), /ping needs none; a missing or wrong token gets
TorchServe's answer, HTTP 400 {"code": 400, "type": "InvalidKeyException", ...}.
Like TorchServe it rotates a key on POST /token?type=inference|management (with the
management key): a new random key, written to the key file (atomically), and the
old one refused from then on; with --key-expiry-s N a key is refused N seconds
after it was issued (TorchServe's token_expiration_min) until it is rotated.
--key-file-write-delay-ms N rotates in TorchServe 0.12's order instead: the new
key in force at once, the key file truncated and rewritten in place N ms later
(a reader meanwhile finds the old keys or an empty file); --ping-needs-key makes
/ping need the inference key, as TorchServe 0.11+ does.

With --max-request-size N it answers 413 to request bodies over N bytes, as
TorchServe does past its max_request_size (6553500 by default);
--log-requests FILE appends one line per POST ("PATH BODY_BYTES") for tests.
With --malformed-predictions every prediction is answered 200 with a body that
is not lull's batch contract (a broken server, for the outlier ejection tests),
with --short-predictions every batch 200 with one prediction too few;
--delay-ms longer than lull's --batch-timeout-ms makes predictions hang while
/ping still answers. --models-ready-after-ms N answers /ping Healthy at once but
has no model loaded for N ms after start (GET /models/{name} 404, predictions
503), as a restarted TorchServe does while its workers load the models.

Usage: lull_modelserver.py --models resnet18,mobilenet_v3_small --port 0 --port-file PORT
       lull_modelserver.py --fake fast:1:0.5 --fake slow:20:2 ...   (no torch, for tests)
       lull_modelserver.py --replay-profile PROFILE.json [--models a,b] --seed 1
           (no torch: each batch sleeps a latency drawn from the profile's samples for
            its model and batch size; the deterministic end-to-end gate uses it)
"""
import argparse
import json
import os
import re
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The handlers' batch contract: packaging/torchserve/ in the source tree,
# share/lull/torchserve/ beside share/lull/modelserver/ when installed.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(_HERE, "..", "..", "packaging", "torchserve"), os.path.join(_HERE, "..", "torchserve")]
import lull_batch_contract as contract  # noqa: E402
import management  # noqa: E402
import models as zoo  # noqa: E402
import v2_api as v2  # noqa: E402
from urllib.parse import parse_qsl, unquote  # noqa: E402


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # a restarted server takes its old port back at once
    request_queue_size = 128  # the default backlog of 5 refuses bursts of new connections

    def __init__(self, addr, registry, delay_ms, keys=None):
        super().__init__(addr, Handler)
        self.models = registry  # management.ModelRegistry: what is loaded, and the store
        self.delay_ms = delay_ms
        self.keys = keys  # {"inference": (KEY, ISSUED), "management": ...}, or None: no token authorization
        self.keys_lock = threading.Lock()
        self.key_file = None  # where rotated keys are written
        self.key_expiry_s = 0  # 0: keys never expire
        self.key_write_delay_ms = 0  # > 0: TorchServe's order (key in force, then the file rewritten in place)
        self.ping_needs_key = False
        self.batch_size = 1  # what GET /models/{name} reports (the stand-in never batches requests itself)
        self.max_batch_delay = 100  # TorchServe's default
        self.max_request_size = 0  # 0: no limit
        self.log_requests = None
        self.malformed_predictions = False  # fault injection: 200 with an undecodable body
        self.short_predictions = False  # fault injection: 200 with one prediction too few
        self.only_v2 = False  # --only-v2: TorchServe's routes answer 404, as on Triton
        self.tensor_inputs = False  # --tensor-inputs: v2 requests may carry any tensors (one query per row)
        self.whole_batch_refusal = False  # --whole-batch-refusal: one bad input refuses the v2 request
        self.not_ready_file = None  # --not-ready-file: while it exists, v2 models answer not ready (MLServer)
        self.models_ready_at = 0.0  # --models-ready-after-ms: time.monotonic() before which no model is loaded
        self.log_lock = threading.Lock()
        self.device_lock = threading.Lock()  # one forward pass at a time, like one device


    def rotate_key(self, api):
        """TorchServe's /token: a new key for `api`, the old one refused from now on; the key file rewritten."""
        key = secrets.token_urlsafe(12)
        with self.keys_lock:
            self.keys[api] = (key, time.time())
            expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + (self.key_expiry_s or 3600)))
            data = {a: {"key": k, "expiration time": expires} for a, (k, _) in self.keys.items()}
            data["API"] = {"key": self.api_key}
            if self.key_write_delay_ms > 0:
                # TorchServe 0.12: the new key is already checked; the file is
                # truncated and written in place afterwards.
                open(self.key_file, "w").close()
                text = json.dumps(data)

                def write_later():
                    time.sleep(self.key_write_delay_ms / 1000.0)
                    with self.keys_lock, open(self.key_file, "w") as f:
                        f.write(text)
                threading.Thread(target=write_later, daemon=True).start()
                return {"key": key, "expiration time": expires}
            tmp = self.key_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump(data, f)
            os.replace(tmp, self.key_file)
        return {"key": key, "expiration time": expires}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients reuse connections
    disable_nagle_algorithm = True
    server_version = "lull-modelserver/1"

    def log_message(self, fmt, *args):  # quiet: one line per request would swamp the logs
        pass

    def _send(self, code, body, ctype="application/json"):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code, kind, message):
        self._send(code, contract.error_body(code, kind, message))

    def _not_v2(self):
        """--only-v2: True (and 404 sent) for a path outside the Open Inference Protocol's."""
        if not self.server.only_v2 or self.path == "/v2" or self.path.startswith("/v2/"):
            return False
        self._send(*v2.error(404, "no such resource: %s %s (this server speaks v2 only)" % (self.command, self.path)))
        return True

    def _token_refused(self, api):
        """TorchServe's token check: True (and the refusal sent) when the call lacks the api's key."""
        keys = self.server.keys
        if keys is None:
            return False
        with self.server.keys_lock:
            key, issued = keys[api]
        expired = self.server.key_expiry_s > 0 and time.time() - issued > self.server.key_expiry_s
        if self.headers.get("Authorization") == "Bearer " + key and not expired:
            return False
        self._error(400, "InvalidKeyException",
                    "Token Authorization failed. Token either incorrect, expired, or not provided correctly")
        return True

    def _not_ready(self):
        """--not-ready-file: while that file exists, every model is not ready."""
        return bool(self.server.not_ready_file) and os.path.exists(self.server.not_ready_file)

    def _loading(self):
        """--models-ready-after-ms: True while the models are still loading (/ping passes meanwhile)."""
        return time.monotonic() < self.server.models_ready_at

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        models = self.server.models
        if self._not_v2():
            return
        if path == "/ping":
            if self.server.ping_needs_key and self._token_refused("inference"):
                return
            return self._send(200, json.dumps({"status": "Healthy"}))
        if path == "/v2" or path.startswith("/v2/"):
            m = v2.MODEL.fullmatch(path)
            if self._not_ready() and (path == "/v2/health/ready" or (m and m.group(3) == "/ready")):
                return self._send(400, "")  # MLServer's not-ready answer: 400, empty body
            return self._send(*(v2.get(self.server.models, path) or v2.error(404, "no such resource: GET " + path)))
        if self._token_refused("management"):
            return
        if path == "/models":
            return self._send(200, json.dumps(
                {"models": [{"modelName": n, "modelUrl": models.url(n)} for n in models.names()]}))
        m = re.fullmatch(r"/models/([^/]+)(?:/[^/]+)?", path)
        if m:
            name = unquote(m.group(1))
            workers = models.worker_count(name)
            if workers is None or self._loading():
                return self._error(404, "ModelNotFoundException", "Model not found: " + name)
            model = models.get(name)
            memory = {"memoryUsage": model.memory_bytes()} if hasattr(model, "memory_bytes") else {}  # TorchVision only
            return self._send(200, json.dumps([{
                "modelName": name, "modelVersion": "1.0", "modelUrl": models.url(name),
                "runtime": "python", "minWorkers": 1, "maxWorkers": 1,
                "batchSize": self.server.batch_size, "maxBatchDelay": self.server.max_batch_delay,
                "loadedAtStartup": models.loaded_at_startup(name),
                "workers": [{"id": str(9000 + i), "status": "READY", "pid": os.getpid(), "gpu": False, **memory}
                            for i in range(workers)],
            }]))
        self._error(404, "ResourceNotFoundException", "Requested resource is not found: " + path)

    def _run(self, model, inputs):
        """The model's answers to `inputs` as one batch, one forward pass at a time;
        None (and a broken answer sent) with --malformed-predictions."""
        if self.server.malformed_predictions:
            self._send(200, "<html>not a prediction</html>", "text/html")
            return None
        with self.server.device_lock:
            if self.server.delay_ms > 0:  # fault injection: a slow server
                time.sleep(self.server.delay_ms / 1000.0)
            return contract.answer_batch(inputs, model.prepare, model.predict)

    def _v2_post(self, path, body):
        """POST under /v2: inference, or the model repository extension."""
        answer = v2.repository(self.server.models, path, body)
        if answer is not None:
            return self._send(*answer)
        m = v2.MODEL.fullmatch(path)
        if not m or m.group(3) != "/infer":
            return self._send(*v2.error(404, "no such resource: POST " + path))
        name = m.group(1)
        model = self.server.models.get(name)
        if model is None:
            return self._send(*v2.error(404, "unknown model: '%s'" % name))
        if self._not_ready():
            return self._send(*v2.error(400, "Model %s is not ready yet." % name))  # MLServer's words
        try:
            header = self.headers.get("Inference-Header-Content-Length") if v2.BINARY else None
            inputs, rid = v2.read_infer_request(body, self.server.tensor_inputs,
                                                int(header) if header and header.isdigit() else None)
        except v2.RequestError as e:
            return self._send(*v2.error(e.code, str(e)))
        preds = self._run(model, inputs)
        if preds is None:
            return
        if self.server.short_predictions:  # fault injection: a broken handler
            preds = preds[:-1]
        refusal = v2.whole_request_refusal(preds) if self.server.whole_batch_refusal else None
        if refusal is not None:
            return self._send(*refusal)
        self._send(200, v2.infer_response(name, rid, preds))

    def do_DELETE(self):
        if self._not_v2():
            return
        m = re.fullmatch(r"/models/([^/]+)(?:/[^/]+)?", self.path.split("?", 1)[0])
        if not m:
            return self._error(404, "ResourceNotFoundException", "Requested resource is not found: " + self.path)
        if self._token_refused("management"):
            return
        self._send(*self.server.models.unregister(unquote(m.group(1))))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.server.log_requests:
            with self.server.log_lock, open(self.server.log_requests, "a") as log:
                log.write("%s %d\n" % (self.path, length))
        if self.server.max_request_size and length > self.server.max_request_size:
            return self._error(413, "RequestEntityTooLarge",
                               "request of %d bytes is over max_request_size %d" % (length, self.server.max_request_size))
        path, _, query = self.path.partition("?")
        if self._not_v2():
            return
        if path.startswith("/v2/"):
            return self._v2_post(path, body)
        if path == "/token":
            if self._token_refused("management"):
                return
            api = dict(parse_qsl(query)).get("type")
            if self.server.keys is None or api not in ("inference", "management"):
                return self._error(400, "BadRequestException", "use POST /token?type=inference|management")
            return self._send(200, json.dumps({api: self.server.rotate_key(api)}))
        if path == "/models":
            if self._token_refused("management"):
                return
            return self._send(*self.server.models.register(dict(parse_qsl(query))))
        m = re.fullmatch(r"/predictions/([^/?]+)(?:/[^/?]+)?", path)
        if not m:
            return self._error(404, "ResourceNotFoundException", "Requested resource is not found: " + self.path)
        if self._token_refused("inference"):
            return
        model = self.server.models.get(m.group(1))
        if model is None:
            return self._error(404, "ModelNotFoundException", "Model not found: " + m.group(1))
        if self._loading():  # TorchServe's answer while the model has no worker yet
            return self._error(503, "ServiceUnavailableException",
                               'Model "%s" has no worker to serve inference request. '
                               "Please use scale workers API to add workers." % m.group(1))
        is_batch = (self.headers.get("Content-Type") or "").startswith("application/json")
        try:
            inputs = contract.decode_batch(body) if is_batch else [body]
        except contract.BatchContractError as e:
            return self._error(400, "BadRequestException", str(e))
        preds = self._run(model, inputs)
        if preds is None:
            return
        if is_batch:
            if self.server.short_predictions:  # fault injection: a broken handler
                preds = preds[:-1]
            return self._send(200, contract.encode_predictions(preds))
        if set(preds[0]) == {"error"}:  # a single input rejected: TorchServe's error answer
            e = preds[0]["error"]
            return self._error(e["code"], e["type"], e["message"])
        self._send(200, json.dumps(preds[0]))


def main():
    ap = argparse.ArgumentParser(description="TorchServe-compatible stand-in model server")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the bound port here (atomically) once listening")
    ap.add_argument("--models", default="",
                    help="comma-separated TorchVision model names; with --replay-profile, the profile's "
                         "models to replay (default: all)")
    ap.add_argument("--fake", action="append", default=[], help="name:base_ms:per_item_ms (no torch)")
    ap.add_argument("--replay-profile", help="a lull profile set (JSON): its models sleep latencies drawn "
                                             "from its samples (no torch)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the --replay-profile draws")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--delay-ms", type=float, default=0, help="extra latency per request (fault tests)")
    ap.add_argument("--malformed-predictions", action="store_true",
                    help="answer every prediction 200 with an undecodable body (fault tests)")
    ap.add_argument("--short-predictions", action="store_true",
                    help="answer every batch 200 with one prediction too few (fault tests)")
    ap.add_argument("--max-request-size", type=int, default=0, help="413 for larger request bodies (0: no limit)")
    ap.add_argument("--log-requests", help="append 'PATH BODY_BYTES' per POST to this file (tests)")
    ap.add_argument("--token-file", help="TorchServe key_file.json: enforce its inference/management keys "
                                         "(POST /token rotates one and rewrites this file)")
    ap.add_argument("--key-expiry-s", type=float, default=0,
                    help="with --token-file: a key is refused this long after it was issued (0: never)")
    ap.add_argument("--key-file-write-delay-ms", type=float, default=0,
                    help="with --token-file: rotate in TorchServe's order, the new key in force at once and the "
                         "file truncated, then rewritten in place this much later (0: atomically, at once)")
    ap.add_argument("--ping-needs-key", action="store_true",
                    help="with --token-file: /ping needs the inference key (TorchServe 0.11+)")
    ap.add_argument("--report-batch-size", type=int, default=1,
                    help="batchSize that GET /models/{name} reports (tests of lull's batching check)")
    ap.add_argument("--store-fake", action="append", default=[],
                    help="name:base_ms:per_item_ms: a fake the management API can load (POST /models?url=NAME.mar) "
                         "but that is not loaded at start")
    ap.add_argument("--fail-load", action="append", default=[],
                    help="loading this store entry through the management API fails with TorchServe's 500 "
                         "(fault tests)")
    ap.add_argument("--load-delay-ms", type=float, default=0,
                    help="how long a load through the management API takes")
    ap.add_argument("--models-ready-after-ms", type=float, default=0,
                    help="for this long after start /ping passes but no model is loaded: GET /models/{name} "
                         "answers 404, predictions 503 (TorchServe loading its models)")
    ap.add_argument("--only-v2", action="store_true",
                    help="speak the Open Inference Protocol only: TorchServe's routes answer 404 (tests of "
                         "lull serve --backend v2)")
    ap.add_argument("--whole-batch-refusal", action="store_true",
                    help="an input a model rejects refuses the whole v2 request, 400 {\"error\": MESSAGE} "
                         "(as KServe, MLServer and Triton do), instead of a per-input error in the answer")
    ap.add_argument("--not-ready-file",
                    help="while this file exists, every v2 model is not ready as MLServer answers it: ready "
                         "400 with an empty body, infer 400 {\"error\": \"Model M is not ready yet.\"}")
    ap.add_argument("--binary-tensors", action="store_true",
                    help="v2: list the binary_tensor_data extension and take BYTES inputs in it "
                         "(Inference-Header-Content-Length), as Triton does")
    ap.add_argument("--tensor-inputs", action="store_true",
                    help="v2: accept any tensor inputs sharing their first dimension, one query per row (its "
                         "bytes: the row as JSON); tests of lull passing a client's tensors through")
    ap.add_argument("--report-max-batch-delay", type=int, default=100,
                    help="maxBatchDelay (ms) that GET /models/{name} reports")
    args = ap.parse_args()

    models, store, make_torchvision = {}, {}, None
    try:
        for spec in args.fake:
            f = zoo.parse_fake(spec)
            models[f.name] = f
        for spec in args.store_fake:
            f = zoo.parse_fake(spec)
            store[f.name] = f
    except ValueError as e:
        ap.error(str(e))
    names = [n for n in args.models.split(",") if n]
    if args.replay_profile:
        try:
            loaded = zoo.load_replay(args.replay_profile, names, args.seed)
            # The rest of the profile is the store (its own draws: they start when one is loaded).
            store.update({n: m for n, m in zoo.load_replay(args.replay_profile, [], args.seed + 1).items()
                          if n not in loaded})
        except (OSError, ValueError) as e:
            ap.exit(2, "lull_modelserver: %s\n" % e)
        models.update(loaded)
    elif names:
        import torch
        torch.set_num_threads(args.threads)
        for n in names:
            models[n] = zoo.TorchVisionModel(n, args.image_size)
        make_torchvision = lambda n: zoo.TorchVisionModel(n, args.image_size)  # noqa: E731
    if not models:
        ap.error("no models: give --models, --fake or --replay-profile")
    registry = management.ModelRegistry(models, store, args.fail_load, args.load_delay_ms, make_torchvision)

    keys = None
    if args.token_file:
        try:
            with open(args.token_file) as f:
                data = json.load(f)
            keys = {api: (data[api]["key"], time.time()) for api in ("inference", "management")}
            api_key = data.get("API", {}).get("key", "")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            ap.exit(2, "lull_modelserver: %s: not a TorchServe key file (%s)\n" % (args.token_file, e))
    server = ModelServer((args.host, args.port), registry, args.delay_ms, keys)
    if keys is not None:
        server.key_file = args.token_file
        server.api_key = api_key
        server.key_expiry_s = args.key_expiry_s
        server.key_write_delay_ms = args.key_file_write_delay_ms
        server.ping_needs_key = args.ping_needs_key
    server.batch_size = args.report_batch_size
    server.max_batch_delay = args.report_max_batch_delay
    server.max_request_size = args.max_request_size
    server.log_requests = args.log_requests
    server.malformed_predictions = args.malformed_predictions
    server.short_predictions = args.short_predictions
    server.only_v2 = args.only_v2
    server.tensor_inputs = args.tensor_inputs
    server.whole_batch_refusal = args.whole_batch_refusal
    server.not_ready_file = args.not_ready_file
    server.models_ready_at = time.monotonic() + args.models_ready_after_ms / 1000.0
    v2.BINARY = args.binary_tensors
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("lull-modelserver: %s on http://%s:%d" % (",".join(registry.names()), args.host, port),
          file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
