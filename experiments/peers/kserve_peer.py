#!/usr/bin/python3
"""KServe 0.12.1's Python ModelServer (v2 REST) serving peer_models, for lull's
interop checks. A developer runs it by hand with KServe's source fetched
outside this repository (docs/operators-guide.md, "Interop with real peers"):

  KSERVE_SRC=/work/peers/kserve-0.12.1/python/kserve PEERS_DEPS=/work/peers \
    /usr/bin/python3 experiments/peers/kserve_peer.py --port 8001 \
    --models tiny_net,small_net [--input-name input] [--input-names tiny_net=INPUT0]

Binds 127.0.0.1 (0.12.1 binds 0.0.0.0 itself: uvicorn.Config is wrapped).
"""
import argparse
import os
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "stubs"))
deps = os.environ.get("PEERS_DEPS", "/work/peers")
for p in ("cloudevents", "timing-asgi"):
    sys.path.insert(0, os.path.join(deps, p))
KSERVE_SRC = os.environ.get("KSERVE_SRC", os.path.join(deps, "kserve-0.12.1/python/kserve"))
sys.path.insert(0, KSERVE_SRC)
sys.path.insert(0, HERE)


def _dist_info():
    # KServe reads its own version from installed package metadata: a
    # dist-info of the source's pyproject version, in a temporary folder.
    import re
    import tempfile
    with open(os.path.join(KSERVE_SRC, "pyproject.toml")) as f:
        version = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    d = tempfile.mkdtemp(prefix="kserve-meta-")
    os.mkdir(os.path.join(d, f"kserve-{version}.dist-info"))
    with open(os.path.join(d, f"kserve-{version}.dist-info", "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: kserve\nVersion: {version}\n")
    sys.path.insert(0, d)


_dist_info()

import uvicorn  # noqa: E402

_config_init = uvicorn.Config.__init__


def _loopback_config(self, *args, **kwargs):
    kwargs["host"] = "127.0.0.1"
    _config_init(self, *args, **kwargs)


uvicorn.Config.__init__ = _loopback_config

import numpy as np  # noqa: E402
import kserve  # noqa: E402
from kserve.errors import InvalidInput  # noqa: E402
from kserve.protocol.infer_type import InferOutput, InferResponse  # noqa: E402

import peer_models  # noqa: E402


class PeerModel(kserve.Model):
    def __init__(self, name, input_name):
        super().__init__(name)
        self.input_name = input_name
        self.ready = True

    def get_input_types(self):
        return [{"name": self.input_name, "datatype": "BYTES", "shape": [-1]}]

    def get_output_types(self):
        return [{"name": "output", "datatype": "BYTES", "shape": [-1]}]

    async def predict(self, payload, headers=None):
        if len(payload.inputs) != 1:
            raise InvalidInput(f"expected 1 input, got {len(payload.inputs)}")
        inp = payload.inputs[0]
        if inp.name != self.input_name:
            raise InvalidInput(f"unexpected input {inp.name!r}; this model takes {self.input_name!r}")
        try:
            if inp.datatype == "BYTES":
                data = inp.data
                flat = []

                def walk(x):
                    if isinstance(x, list):
                        for y in x:
                            walk(y)
                    else:
                        flat.append(x)
                walk(data)
                rows = peer_models.run_bytes(self.name, flat)
                out = InferOutput(name="output", shape=[len(rows)], datatype="BYTES", data=rows)
            else:
                arr = inp.as_numpy()
                sums = peer_models.run_numeric(self.name, arr)
                out = InferOutput(name="output", shape=[int(sums.shape[0])], datatype="FP32", data=sums.tolist())
        except peer_models.Refused as e:
            raise InvalidInput(str(e))
        # KServe 0.12's response needs an id: the request's, else a new one (as its examples do).
        return InferResponse(response_id=payload.id or str(uuid.uuid4()), model_name=self.name, infer_outputs=[out])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--models", default="tiny_net,small_net")
    ap.add_argument("--input-name", default="input")
    ap.add_argument("--input-names", default="", help="MODEL=NAME,... per model")
    a = ap.parse_args()
    per = dict(kv.split("=", 1) for kv in a.input_names.split(",") if kv)
    models = [PeerModel(m, per.get(m, a.input_name)) for m in a.models.split(",")]
    kserve.ModelServer(http_port=a.port, grpc_port=a.port + 1000, enable_grpc=False, workers=1).start(models)


if __name__ == "__main__":
    main()
