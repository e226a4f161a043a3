#!/usr/bin/python3
"""A client of lull's Open Inference Protocol (KServe v2) front end, with the
Python standard library only (docs/operators-guide.md).

  python3 docs/v2_client.py http://127.0.0.1:8070 image-classification img.jpg
      -> the model that served it and its prediction
  python3 docs/v2_client.py http://127.0.0.1:8070 text-classification --text "hello world"
  python3 docs/v2_client.py http://127.0.0.1:8070 TASK --check
      -> health, metadata, one inference and three bad requests (wrong
         datatype, shape mismatch, missing inputs), each checked against the
         protocol; exit 1 on the first that is not as it says.
"""
import argparse
import base64
import json
import sys
import urllib.error
import urllib.request


def call(base, path, body=None, timeout=10):
    """(status, parsed JSON body) of GET (body None) or POST JSON to base+path."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def bytes_request(payload, name="input"):
    """One query: one BYTES element; text as it is, other bytes as base64."""
    try:
        text = payload.decode("utf-8")
        return {"inputs": [{"name": name, "shape": [1], "datatype": "BYTES", "data": [text]}]}
    except UnicodeDecodeError:
        return {"inputs": [{"name": name, "shape": [1], "datatype": "BYTES",
                            "parameters": {"content_type": "base64"},
                            "data": [base64.b64encode(payload).decode("ascii")]}]}


def infer(base, task, payload, request_id=None):
    body = bytes_request(payload)
    if request_id is not None:
        body["id"] = request_id
    return call(base, "/v2/models/%s/infer" % task, body)


def prediction(answer):
    """The prediction of a v2 answer whose one BYTES output holds the model's JSON."""
    out = answer["outputs"][0]
    return json.loads(out["data"][0]) if out["datatype"] == "BYTES" else out


def check(base, task):
    def expect(what, cond):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            sys.exit(1)

    status, body = call(base, "/v2/health/live")
    expect("live: 200 %s" % body, status == 200 and body == {"live": True})
    status, body = call(base, "/v2/health/ready")
    expect("ready: 200 %s" % body, status == 200 and body == {"ready": True})
    status, body = call(base, "/v2/models/%s/ready" % task)
    expect("model ready: 200 %s" % body, status == 200 and body == {"name": task, "ready": True})
    status, body = call(base, "/v2/models/%s" % task)
    expect("metadata: 200, name %s" % body.get("name"), status == 200 and body["name"] == task)
    status, body = infer(base, task, b"\x89PNG not really an image but bytes \xff", request_id="q1")
    expect("infer: 200, id %s, model %s" % (body.get("id"), body.get("model_name")),
           status == 200 and body["id"] == "q1" and body["model_name"] and body["outputs"])
    print("     prediction of %s: %s" % (body["model_name"], json.dumps(prediction(body))))
    bad = {
        "wrong datatype": {"inputs": [{"name": "x", "shape": [1], "datatype": "FLOAT32", "data": [1.0]}]},
        "shape mismatch": {"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3]}]},
        "missing inputs": {"id": "no-inputs"},
    }
    for what, req in bad.items():
        status, body = call(base, "/v2/models/%s/infer" % task, req)
        expect("%s: %d %s" % (what, status, body),
               400 <= status < 500 and isinstance(body, dict) and set(body) == {"error"})
    status, body = call(base, "/v2/models/no-such-task/infer", bytes_request(b"x"))
    expect("unknown model: %d %s" % (status, body), status == 404 and set(body) == {"error"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="lull serve's address, e.g. http://127.0.0.1:8070")
    ap.add_argument("task")
    ap.add_argument("file", nargs="?", help="the input's bytes (an image)")
    ap.add_argument("--text", help="a text input instead of a file")
    ap.add_argument("--check", action="store_true", help="check health, metadata, inference and errors")
    args = ap.parse_args()
    base = args.url.rstrip("/")
    if args.check:
        return check(base, args.task)
    if args.text is None and args.file is None:
        ap.error("give a FILE, --text or --check")
    payload = args.text.encode() if args.text is not None else open(args.file, "rb").read()
    status, body = infer(base, args.task, payload)
    if status != 200:
        print("HTTP %d: %s" % (status, body.get("error") if isinstance(body, dict) else body), file=sys.stderr)
        sys.exit(1)
    print("%s: %s" % (body["model_name"], json.dumps(prediction(body))))


if __name__ == "__main__":
    main()
