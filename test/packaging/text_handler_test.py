#!/usr/bin/python3
"""The text (BERT) handler's own logic without TorchServe, torch or
transformers (none is a Debian package): its inputs read as text or as a
{"text", "text_pair"} JSON object, bad ones rejected one by one, and every
input of every request answered in order from ONE forward pass. A stand-in
for TorchServe's BaseHandler is put where the handler imports it."""
import json
import os
import sys
import types
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "packaging", "torchserve"))
ts = types.ModuleType("ts")
ts.torch_handler = types.ModuleType("ts.torch_handler")
ts.torch_handler.base_handler = types.ModuleType("ts.torch_handler.base_handler")
ts.torch_handler.base_handler.BaseHandler = object
sys.modules.update({"ts": ts, "ts.torch_handler": ts.torch_handler,
                    "ts.torch_handler.base_handler": ts.torch_handler.base_handler})

import lull_batch_contract as contract  # noqa: E402
import lull_text_handler as handler  # noqa: E402


class ForwardCounting(handler.LullTextHandler):
    """The model replaced by one that answers the length of each text."""
    def __init__(self):
        self.passes = []

    def _forward(self, texts):
        self.passes.append(list(texts))
        return [{"class": len(t), "label": "n", "score": 1.0 if p is None else 0.5} for t, p in texts]


class TextHandlerTest(unittest.TestCase):
    def test_inputs_are_text_or_a_text_pair(self):
        self.assertEqual(handler.read_text(b"hello world"), ("hello world", None))
        self.assertEqual(handler.read_text(b'{"text": "a premise", "text_pair": "a hypothesis"}'),
                         ("a premise", "a hypothesis"))
        self.assertEqual(handler.read_text("{not json"), ("{not json", None))  # text that starts with '{'
        for bad in (b"\xff\xfe", b"   ", b'{"text": 5}', b'{"text": ""}', b'{"text": "a", "text_pair": 3}'):
            with self.assertRaises(contract.InputError, msg=bad):
                handler.read_text(bad)

    def test_every_request_answered_in_order_from_one_pass(self):
        h = ForwardCounting()
        data = [{"body": contract.encode_batch([b"abc", b"\xff"])},
                {"data": contract.encode_batch([b'{"text": "de", "text_pair": "f"}'])}]
        out = h.postprocess(h.inference(h.preprocess(data)))
        self.assertEqual(len(h.passes), 1)
        self.assertEqual(h.passes[0], [("abc", None), ("de", "f")])
        first, second = (json.loads(o)["predictions"] for o in out)
        self.assertEqual(first[0], {"class": 3, "label": "n", "score": 1.0})
        self.assertEqual(first[1]["error"]["code"], 400)
        self.assertIn("not UTF-8", first[1]["error"]["message"])
        self.assertEqual(second, [{"class": 2, "label": "n", "score": 0.5}])


if __name__ == "__main__":
    unittest.main()
