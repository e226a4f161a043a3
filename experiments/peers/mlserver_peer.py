#!/usr/bin/python3
"""MLServer 1.3.5 (v2 REST, model repository extension) serving peer_models,
for lull's interop checks. A developer runs it by hand with MLServer's source
fetched outside this repository (docs/operators-guide.md, "Interop with real peers"):

  MLSERVER_SRC=/work/peers/mlserver-1.3.5 PEERS_DEPS=/work/peers \
    /usr/bin/python3 experiments/peers/mlserver_peer.py --port 8201 \
    --models tiny_net,small_net [--input-name input] [--input-names tiny_net=INPUT0]

Writes a model repository (settings.json, a model-settings.json per model)
into a temporary folder and runs `mlserver start` on it, bound to 127.0.0.1,
in-process inference (parallel_workers 0), Kafka off (a stub for aiokafka).
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
deps = os.environ.get("PEERS_DEPS", "/work/peers")
sys.path.insert(0, os.path.join(HERE, "stubs"))
for p in ("starlette_exporter", "py-grpc-prometheus", "triton-client/src/python/library"):
    sys.path.insert(0, os.path.join(deps, p))
MLSERVER_SRC = os.environ.get("MLSERVER_SRC", os.path.join(deps, "mlserver-1.3.5"))
sys.path.insert(0, MLSERVER_SRC)
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--models", default="tiny_net,small_net")
    ap.add_argument("--input-name", default="input")
    ap.add_argument("--input-names", default="", help="MODEL=NAME,... per model")
    ap.add_argument("--no-load", default="", help="MODEL,... in the repository but not loaded at start")
    ap.add_argument("--reload-delay-s", type=float, default=0,
                    help="a model loaded again (repository extension) takes this long, not ready meanwhile")
    a = ap.parse_args()
    per = dict(kv.split("=", 1) for kv in a.input_names.split(",") if kv)
    repo = tempfile.mkdtemp(prefix="mlserver-peer-")
    with open(os.path.join(repo, "settings.json"), "w") as f:
        json.dump({"host": "127.0.0.1", "http_port": a.port, "grpc_port": a.port + 1000,
                   "metrics_port": a.port + 2000, "parallel_workers": 0, "debug": False,
                   "load_models_at_startup": True}, f)
    for m in a.models.split(","):
        os.mkdir(os.path.join(repo, m))
        with open(os.path.join(repo, m, "model-settings.json"), "w") as f:
            json.dump({"name": m, "implementation": "mlserver_runtime.PeerModel",
                       "parameters": {"extra": {"input_name": per.get(m, a.input_name),
                                                "load_delay_s": a.reload_delay_s}}}, f)
    sys.argv = ["mlserver", "start", repo]
    from mlserver.cli.main import main as mlserver_main
    mlserver_main()


if __name__ == "__main__":
    main()
