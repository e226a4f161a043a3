#!/usr/bin/python3
"""The stand-in server's Open Inference Protocol against the specification.

The messages below follow the shapes of the examples and JSON schemas in the
protocol document (kserve/open-inference-protocol, specification/protocol/
inference_rest.md, and Triton's model repository extension): the example
inference request (an id, two inputs, a requested output), the same request
addressed to the stand-in's model, and the error cases the specification
names. Each answer is checked for the status the specification gives and
for the fields of its response or error object. Runs the server as a child
process on a loopback port (--only-v2), so TorchServe's routes must be absent.
Usage: v2_spec_examples_test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

SOURCE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "..")


def call(method, url, body=None):
    """(status, parsed JSON body or None) of one request."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    return status, (json.loads(raw) if raw else None)


class V2SpecExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        port_file = os.path.join(cls.dir.name, "port")
        cls.server = subprocess.Popen(
            [sys.executable, os.path.join(SOURCE, "test/modelserver/lull_modelserver.py"), "--fake", "fast:1:0",
             "--store-fake", "spare:1:0", "--only-v2", "--port", "0", "--port-file", port_file],
            stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(port_file):
                break
            time.sleep(0.02)
        with open(port_file) as f:
            cls.base = "http://127.0.0.1:%d" % int(f.read())

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(10)
        cls.dir.cleanup()

    def assert_error(self, status, body, code=400):
        """The specification's error object: an error status and {"error": <string>}."""
        self.assertEqual(status, code)
        self.assertEqual(set(body), {"error"})
        self.assertIsInstance(body["error"], str)
        self.assertTrue(body["error"])

    def test_example_request_as_written_is_refused_with_an_error_object(self):
        # The document's example: two inputs the stand-in's model does not take,
        # the second with fewer elements than its shape, and a requested output.
        example = {"id": "42",
                   "inputs": [{"name": "input0", "shape": [2, 2], "datatype": "UINT32", "data": [1, 2, 3, 4]},
                              {"name": "input1", "shape": [3], "datatype": "BOOL", "data": [True]}],
                   "outputs": [{"name": "output0"}]}
        status, body = call("POST", self.base + "/v2/models/fast/infer", example)
        self.assert_error(status, body)
        self.assertIn("input1", body["error"])  # the shape mismatch is named

    def test_example_request_for_this_model_gets_the_response_object(self):
        request = {"id": "42", "inputs": [{"name": "input", "shape": [2], "datatype": "BYTES", "data": ["ab", "abcd"]}],
                   "outputs": [{"name": "output"}]}
        status, body = call("POST", self.base + "/v2/models/fast/versions/1/infer", request)
        self.assertEqual(status, 200)
        self.assertEqual(body["model_name"], "fast")
        self.assertEqual(body["id"], "42")  # the request's id, returned
        self.assertIsInstance(body["model_version"], str)
        (out,) = body["outputs"]
        self.assertEqual(set(out) - {"parameters"}, {"name", "shape", "datatype", "data"})
        self.assertEqual((out["name"], out["datatype"], out["shape"]), ("output", "BYTES", [2]))
        self.assertEqual([json.loads(e)["class"] for e in out["data"]], [2, 4])  # row-major, in order
        # Without an id the response holds none (an id is optional).
        status, body = call("POST", self.base + "/v2/models/fast/infer", {"inputs": request["inputs"]})
        self.assertEqual(status, 200)
        self.assertNotIn("id", body)

    def test_bad_requests_get_400_and_the_error_object(self):
        infer = self.base + "/v2/models/fast/infer"
        good = {"name": "input", "shape": [1], "datatype": "BYTES", "data": ["x"]}
        for name, request in [
                ("wrong datatype", {"inputs": [dict(good, datatype="FP32", data=[1.0])]}),
                ("unknown datatype", {"inputs": [dict(good, datatype="FLOAT")]}),
                ("shape mismatch", {"inputs": [dict(good, shape=[2])]}),
                ("negative dimension", {"inputs": [dict(good, shape=[-1])]}),
                ("missing inputs", {"inputs": []}),
                ("no inputs field", {"id": "1"}),
                ("missing the model's input", {"inputs": [dict(good, name="other")]}),
                ("an output the model lacks", {"inputs": [good], "outputs": [{"name": "logits"}]}),
                ("id not a string", {"id": 42, "inputs": [good]}),
                ("not base64", {"inputs": [dict(good, parameters={"content_type": "base64"}, data=["%%"])]}),
        ]:
            with self.subTest(name):
                self.assert_error(*call("POST", infer, request))
        with self.subTest("not JSON"):
            self.assert_error(*call("POST", infer, b"{not json"))

    def test_unknown_models_and_paths_are_404_with_the_error_object(self):
        self.assert_error(*call("POST", self.base + "/v2/models/absent/infer", {"inputs": []}), code=404)
        self.assert_error(*call("GET", self.base + "/v2/models/absent/ready"), code=404)
        self.assert_error(*call("GET", self.base + "/v2/models/absent"), code=404)
        self.assert_error(*call("GET", self.base + "/v2/nothing"), code=404)
        # --only-v2: TorchServe's API is not there.
        self.assert_error(*call("GET", self.base + "/ping"), code=404)
        self.assert_error(*call("POST", self.base + "/predictions/fast", {"inputs": []}), code=404)

    def test_health_and_metadata_objects(self):
        self.assertEqual(call("GET", self.base + "/v2/health/live"), (200, {"live": True}))
        self.assertEqual(call("GET", self.base + "/v2/health/ready")[0], 200)
        self.assertEqual(call("GET", self.base + "/v2/models/fast/ready"), (200, {"name": "fast", "ready": True}))
        status, server = call("GET", self.base + "/v2")
        self.assertEqual(status, 200)
        self.assertIsInstance(server["name"], str)
        self.assertIsInstance(server["version"], str)
        self.assertIn("model_repository", server["extensions"])
        status, model = call("GET", self.base + "/v2/models/fast")
        self.assertEqual(status, 200)
        self.assertEqual(model["name"], "fast")
        self.assertIsInstance(model["platform"], str)
        self.assertTrue(all(isinstance(v, str) for v in model["versions"]))
        for tensor in model["inputs"] + model["outputs"]:
            self.assertEqual(set(tensor), {"name", "datatype", "shape"})
            self.assertTrue(all(isinstance(d, int) for d in tensor["shape"]))  # -1: variable size
        self.assertEqual(call("GET", self.base + "/v2/models/fast/versions/1")[1], model)

    def test_repository_extension_loads_and_unloads(self):
        repo = self.base + "/v2/repository"
        self.assert_error(*call("POST", repo + "/models/nowhere/load"))
        self.assertEqual(call("POST", repo + "/models/spare/load"), (200, None))
        self.assertEqual(call("POST", repo + "/models/spare/load"), (200, None))  # loaded already: still 200
        self.assertEqual(call("GET", self.base + "/v2/models/spare/ready")[1]["ready"], True)
        status, index = call("POST", repo + "/index", {"ready": True})
        self.assertEqual(status, 200)
        for entry in index:
            self.assertEqual(set(entry), {"name", "version", "state", "reason"})
        self.assertIn("spare", [e["name"] for e in index])
        self.assertEqual(call("POST", repo + "/models/spare/unload"), (200, None))
        self.assert_error(*call("GET", self.base + "/v2/models/spare/ready"), code=404)
        self.assert_error(*call("POST", repo + "/models/spare/unload"))
        status, index = call("POST", repo + "/index", {})
        self.assertEqual([e["state"] for e in index if e["name"] == "spare"], ["UNAVAILABLE"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
