"""lull's batch contract, shared by the TorchServe handler and the stand-in server.

lull's selector picks a model and a batch of queries; the batch travels to a
worker as ONE request so that the worker runs it as one forward pass:

    POST /predictions/{model}
    Content-Type: application/json
    {"inputs": ["<base64 of query 1's bytes>", "<base64 of query 2's bytes>", ...]}

    200 OK
    {"predictions": [<JSON value for query 1>, <JSON value for query 2>, ...]}

The response holds exactly one prediction per input, in the same order, so
lull can hand each query its own answer. An input the model rejects (bytes
that are not a decodable image, say) gets a per-input error in its place,
and the rest of the batch is still answered:

    {"error": {"code": 400, "type": "InvalidInput", "message": "..."}}

lull answers that one query with this error (status "code") and neither
retries it nor blames the worker. Any status but 200 is a failure of the
whole batch, meant for when the model itself fails; the body then follows
TorchServe's error shape {"code": ..., "type": ..., "message": ...}, and
lull takes the worker out of rotation and retries the batch elsewhere.

MALFORMED_MARKER: inputs starting with these bytes are rejected by the
stand-in server's fake and replay models, so that tests and experiments can
send a "malformed" input without a real decoder.

This module is plain Python (no torch) so it can be tested and imported anywhere.
"""
import base64
import binascii
import json


MALFORMED_MARKER = b"LULL-MALFORMED"


class BatchContractError(ValueError):
    """The request does not follow the contract; the message says why."""


class InputError(ValueError):
    """The model rejects one input (not the batch); raised by a model's check."""

    def __init__(self, message, code=400, kind="InvalidInput"):
        super().__init__(message)
        self.code, self.kind = code, kind


def input_error(code, kind, message):
    """A per-input error, in the place of that input's prediction."""
    return {"error": {"code": code, "type": kind, "message": message}}


def answer_batch(inputs, prepare, run):
    """One answer per input, in order: `prepare(raw)` turns each input into
    what `run` takes, raising InputError for an input it rejects; `run(list)`
    runs the accepted ones as ONE batch and returns their predictions in
    order. Rejected inputs get input_error(...) in their place. An exception
    from `run` (the model itself failing) propagates: the whole request fails."""
    answers, accepted, where = [None] * len(inputs), [], []
    for i, raw in enumerate(inputs):
        try:
            accepted.append(prepare(raw))
            where.append(i)
        except InputError as e:
            answers[i] = input_error(e.code, e.kind, str(e))
    if accepted:
        for i, p in zip(where, run(accepted)):
            answers[i] = p
    return answers


def decode_batch(body):
    """Returns the list of input byte strings carried by a request body.

    `body` is bytes, str, or an already-parsed dict (TorchServe parses JSON
    bodies before the handler sees them).
    """
    if isinstance(body, (bytes, bytearray)):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BatchContractError("body is not UTF-8 JSON: %s" % e)
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except json.JSONDecodeError as e:
            raise BatchContractError("body is not JSON: %s" % e)
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
        raise BatchContractError('body must be an object with an "inputs" list')
    inputs = body["inputs"]
    if not inputs:
        raise BatchContractError('"inputs" is empty')
    out = []
    for i, item in enumerate(inputs):
        if not isinstance(item, str):
            raise BatchContractError("inputs[%d] is not a base64 string" % i)
        try:
            out.append(base64.b64decode(item, validate=True))
        except (binascii.Error, ValueError) as e:
            raise BatchContractError("inputs[%d] is not valid base64: %s" % (i, e))
    return out


def decode_requests(data):
    """The inputs of each request a TorchServe handler gets (its `data`: one
    dict per request, the body under "body" or "data")."""
    return [decode_batch(r.get("body") if r.get("body") is not None else r.get("data")) for r in data]


def answer_requests(requests, prepare, run):
    """answer_batch over every input of every request as ONE batch (TorchServe
    may group requests), split back: one list of answers per request."""
    answers = answer_batch([x for inputs in requests for x in inputs], prepare, run)
    out, start = [], 0
    for inputs in requests:
        out.append(answers[start:start + len(inputs)])
        start += len(inputs)
    return out


def encode_batch(inputs):
    """The request body for a list of input byte strings (used by tests and tools)."""
    return json.dumps({"inputs": [base64.b64encode(x).decode("ascii") for x in inputs]})


def encode_predictions(predictions):
    """The response body for a list of JSON-serializable predictions, in input order."""
    return json.dumps({"predictions": list(predictions)}, separators=(",", ":"))


def error_body(code, kind, message):
    """TorchServe's error shape."""
    return json.dumps({"code": code, "type": kind, "message": message})
