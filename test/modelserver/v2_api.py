"""The Open Inference Protocol (KServe v2) REST API, as the stand-in server answers it.

lull serve --backend v2 talks to Triton, KServe or MLServer through this
protocol (runtime/upstream/v2/); the stand-in speaks it on the same port as
TorchServe's API, so the end-to-end tests run over both. What it implements
(docs/operators-guide.md, "Open Inference Protocol", lists what it does not):

  GET  /v2/health/live                       200 {"live": true}
  GET  /v2/health/ready                      200 {"ready": true}; 400 {"error"} while a model loads
  GET  /v2                                   200 server metadata {"name", "version", "extensions"}
  GET  /v2/models/M[/versions/V]             200 model metadata {"name", "versions", "platform", "inputs", "outputs"}
  GET  /v2/models/M[/versions/V]/ready       200 {"name": M, "ready": true|false (loading)}
  POST /v2/models/M[/versions/V]/infer       200 inference response; 400 {"error"} for a bad request
  POST /v2/repository/index                  200 [{"name", "version", "state", "reason"}]
  POST /v2/repository/models/M/load|unload   200 (empty body); 400 {"error"}

Every model takes one input, "input", BYTES of shape [B] (one element per
query; its elements are base64 when the input's parameters say
"content_type": "base64"), and answers one output, "output", BYTES of shape
[B]: each element the JSON text of that query's prediction, or of a
per-input error {"error": {"code","type","message"}} for an input the model
rejects (lull_batch_contract.py's rule: the rest of the batch is answered);
with --whole-batch-refusal such an input refuses the whole request instead,
400 {"error": message}, as the real v2 servers do (KServe 0.12, MLServer 1.3,
Triton: docs/operators-guide.md, "Interop with real peers").
With --tensor-inputs a request may instead carry any tensors sharing their
first dimension B: row i of every input, as the compact JSON
{"NAME": [elements], ...}, is query i's bytes (tests of lull passing a
client's tensors through).
With --binary-tensors the server lists "binary_tensor_data" among its
extensions and takes BYTES inputs in the binary tensor extension
(Inference-Header-Content-Length), as Triton does; with --not-ready-file
its models answer not ready the way MLServer does (lull_modelserver.py).
An unknown model or path gets 404 {"error"}, a model still loading 404 too
(it cannot serve); every other refusal is 400 {"error": message}, the
status the specification names ("typically 400").
"""
import base64
import binascii
import json
import re

import lull_batch_contract as contract

VERSION = "1"
INPUT, OUTPUT = "input", "output"
DATATYPES = {"BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
             "FP16", "FP32", "FP64", "BYTES"}
MODEL = re.compile(r"/v2/models/([^/]+)(?:/versions/([^/]+))?(/ready|/infer)?")
REPOSITORY = re.compile(r"/v2/repository/models/([^/]+)/(load|unload)")


class RequestError(ValueError):
    """A request the protocol refuses: (HTTP status, message)."""

    def __init__(self, message, code=400):
        super().__init__(message)
        self.code = code


def error(code, message):
    return code, json.dumps({"error": message})


def ok(body):
    return 200, json.dumps(body, separators=(",", ":"))


BINARY = False  # --binary-tensors: the server lists and takes the binary tensor extension


def get(registry, path):
    """(status, body) for GET `path`, or None when it is not a v2 path."""
    if path == "/v2/health/live":
        return ok({"live": True})
    if path == "/v2/health/ready":
        loading = [n for n in registry.names() if not registry.worker_count(n)]
        return ok({"ready": True}) if not loading else error(400, "models not ready: " + ", ".join(loading))
    if path in ("/v2", "/v2/"):
        return ok({"name": "lull-modelserver", "version": VERSION, "extensions": ["model_repository"] + (["binary_tensor_data"] if BINARY else [])})
    m = MODEL.fullmatch(path)
    if not m or m.group(3) == "/infer":
        return error(404, "no such resource: GET " + path) if path.startswith("/v2") else None
    name = m.group(1)
    workers = registry.worker_count(name)
    if workers is None:
        return error(404, "unknown model: '%s'" % name)
    if m.group(3) == "/ready":
        return ok({"name": name, "ready": bool(workers)})
    tensor = {"datatype": "BYTES", "shape": [-1]}
    return ok({"name": name, "versions": [VERSION], "platform": "lull_standin",
               "inputs": [dict(name=INPUT, **tensor)], "outputs": [dict(name=OUTPUT, **tensor)]})


def flatten(data, out):
    for e in data:
        if isinstance(e, list):
            flatten(e, out)
        else:
            out.append(e)
    return out


def tensor_rows(tensors):
    """--tensor-inputs: one query per row of tensors that share their first dimension."""
    rows = None
    for name, (shape, _, elements, _) in tensors.items():
        if not shape or (rows is not None and shape[0] != rows):
            raise RequestError("input '%s': shape %s, the inputs must share their first dimension" % (name, shape))
        rows = shape[0]
    queries = []
    for r in range(rows):
        row = {}
        for name, (shape, _, elements, _) in tensors.items():
            per = len(elements) // rows if rows else 0
            row[name] = elements[r * per:(r + 1) * per]
        queries.append(json.dumps(row, separators=(",", ":")).encode())
    return queries


def read_infer_request(body, tensor_inputs=False, header_length=None):
    """The query inputs (bytes each) of an inference request body, and its id (or None).
    header_length: the Inference-Header-Content-Length (binary tensor extension,
    --binary-tensors): the JSON is that many bytes, then the raw BYTES elements
    (each a 4-byte little-endian length and its bytes) of the inputs giving
    binary_data_size. Raises RequestError for anything the protocol or the model refuses."""
    raw = b""
    if header_length is not None:
        if header_length > len(body):
            raise RequestError("Inference-Header-Content-Length %d is past the body's %d bytes"
                               % (header_length, len(body)))
        body, raw = body[:header_length], body[header_length:]
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise RequestError("request body is not JSON: %s" % e)
    if not isinstance(req, dict):
        raise RequestError("request body must be a JSON object")
    rid = req.get("id")
    if rid is not None and not isinstance(rid, str):
        raise RequestError("'id' must be a string")
    inputs = req.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise RequestError("'inputs' must be a non-empty list")
    tensors = {}
    for i, t in enumerate(inputs):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise RequestError("inputs[%d]: want an object with a 'name' string" % i)
        name = t["name"]
        if name in tensors:
            raise RequestError("input '%s' given twice" % name)
        shape, datatype, data = t.get("shape"), t.get("datatype"), t.get("data")
        size = (t.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            if datatype != "BYTES" or not isinstance(size, int) or size > len(raw):
                raise RequestError("input '%s': binary_data_size %r (BYTES only, within the body)" % (name, size))
            data, chunk, raw = [], raw[:size], raw[size:]
            while chunk:
                n = int.from_bytes(chunk[:4], "little")
                if len(chunk) < 4 + n:
                    raise RequestError("input '%s': a binary element runs past binary_data_size" % name)
                data.append(chunk[4:4 + n])
                chunk = chunk[4 + n:]
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                 for d in shape):
            raise RequestError("input '%s': 'shape' must be a list of non-negative integers" % name)
        if datatype not in DATATYPES:
            raise RequestError("input '%s': unknown datatype %r" % (name, datatype))
        if not isinstance(data, list):
            raise RequestError("input '%s': 'data' must be a list" % name)
        elements = flatten(data, [])
        count = 1
        for d in shape:
            count *= d
        if len(elements) != count:
            raise RequestError("input '%s': %d data elements for shape %s (%d)" % (name, len(elements), shape, count))
        tensors[name] = (shape, datatype, elements, t.get("parameters") or {})
    for want in req.get("outputs") or []:
        if not isinstance(want, dict) or want.get("name") != OUTPUT:
            raise RequestError("requested output %s: the model has only '%s'" % (json.dumps(want), OUTPUT))
    if tensor_inputs and set(tensors) != {INPUT}:
        return tensor_rows(tensors), rid
    unknown = sorted(set(tensors) - {INPUT})
    if unknown:
        raise RequestError("unexpected input%s %s: the model takes only '%s'" % (
            "s" if len(unknown) > 1 else "", ", ".join("'%s'" % n for n in unknown), INPUT))
    if INPUT not in tensors:
        raise RequestError("missing input '%s'" % INPUT)
    shape, datatype, elements, params = tensors[INPUT]
    if datatype != "BYTES":
        raise RequestError("input '%s': datatype %s, the model takes BYTES" % (INPUT, datatype))
    if len(shape) != 1:
        raise RequestError("input '%s': shape %s, the model takes [B] (one element per query)" % (INPUT, shape))
    if all(isinstance(e, bytes) for e in elements):  # binary: raw already
        return list(elements), rid
    if not all(isinstance(e, str) for e in elements):
        raise RequestError("input '%s': BYTES elements must be strings" % INPUT)
    if isinstance(params, dict) and params.get("content_type") == "base64":
        try:
            return [base64.b64decode(e, validate=True) for e in elements], rid
        except (binascii.Error, ValueError) as e:
            raise RequestError("input '%s': an element is not base64 (%s)" % (INPUT, e))
    return [e.encode("utf-8") for e in elements], rid


def whole_request_refusal(predictions):
    """--whole-batch-refusal: the first per-input error refuses the whole
    request, (its code, {"error": its message}), as KServe, MLServer and Triton
    answer a request holding one bad input; None when every input was answered."""
    for p in predictions:
        e = p.get("error") if isinstance(p, dict) else None
        if isinstance(e, dict):
            return error(int(e.get("code") or 400), str(e.get("message", "")))
    return None


def infer_response(model_name, rid, predictions):
    """The inference response for one prediction (JSON value) per query."""
    body = {"model_name": model_name, "model_version": VERSION}
    if rid is not None:
        body["id"] = rid
    body["outputs"] = [{"name": OUTPUT, "datatype": "BYTES", "shape": [len(predictions)],
                        "data": [json.dumps(p, separators=(",", ":")) for p in predictions]}]
    return json.dumps(body, separators=(",", ":"))


def repository(registry, path, body):
    """(status, body) for POST /v2/repository/..., or None when `path` is none of it."""
    if path == "/v2/repository/index":
        try:
            ready_only = bool((json.loads(body or b"{}") or {}).get("ready"))
        except (ValueError, AttributeError):
            return error(400, "index request body is not a JSON object")
        index = []
        for name in registry.store_names():
            workers = registry.worker_count(name)
            state = "UNAVAILABLE" if workers is None else ("READY" if workers else "LOADING")
            if not ready_only or state == "READY":
                index.append({"name": name, "version": VERSION, "state": state,
                              "reason": "unloaded" if workers is None else ""})
        return ok(index)
    m = REPOSITORY.fullmatch(path)
    if not m:
        return None
    name, action = m.group(1), m.group(2)
    if action == "load":
        if registry.worker_count(name):
            return 200, ""  # loaded already: as Triton, a load of a loaded model succeeds
        code, answer = registry.register({"url": name + ".mar", "initial_workers": "1", "synchronous": "true"})
    else:
        code, answer = registry.unregister(name)
    if code == 200:
        return 200, ""
    message = json.loads(answer).get("message", answer)
    return error(400, "failed to %s '%s': %s" % (action, name, message))
