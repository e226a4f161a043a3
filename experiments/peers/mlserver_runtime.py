"""The MLServer runtime of the peer models (peer_models.py): loaded by
MLServer from a model-settings.json that mlserver_peer.py writes."""
import asyncio
import os

import numpy as np
from mlserver import MLModel
from mlserver.codecs import Base64Codec, StringCodec
from mlserver.errors import InferenceError
from mlserver.types import InferenceRequest, InferenceResponse, ResponseOutput, MetadataTensor

import peer_models




class PeerModel(MLModel):
    async def load(self) -> bool:
        extra = (self.settings.parameters.extra or {}) if self.settings.parameters else {}
        # Loaded before in this process (MLServer may import this module afresh:
        # the mark is in the environment): a reload takes load_delay_s, during
        # which MLServer answers 400 "Model M is not ready yet.".
        mark = "PEER_MODEL_LOADED_" + self.name
        if os.environ.get(mark):
            await asyncio.sleep(float(extra.get("load_delay_s", 0)))
        os.environ[mark] = "1"
        self.input_name = extra.get("input_name", "input")
        self._settings.inputs = [MetadataTensor(name=self.input_name, datatype="BYTES", shape=[-1])]
        self._settings.outputs = [MetadataTensor(name="output", datatype="BYTES", shape=[-1])]
        self.ready = True
        return self.ready

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        if len(payload.inputs) != 1:
            raise InferenceError(f"expected 1 input, got {len(payload.inputs)}")
        inp = payload.inputs[0]
        if inp.name != self.input_name:
            raise InferenceError(f"unexpected input {inp.name!r}; this model takes {self.input_name!r}")
        try:
            if inp.datatype == "BYTES":
                # MLServer's own codecs: base64 by its content_type convention, else strings.
                params = inp.parameters.dict() if inp.parameters else {}
                if params.get("content_type") == "base64":
                    rows = Base64Codec.decode_input(inp)
                else:
                    rows = StringCodec.decode_input(inp)
                flat = []

                def walk(x):
                    if isinstance(x, (list, tuple, np.ndarray)):
                        for y in x:
                            walk(y)
                    else:
                        flat.append(x)
                walk(rows)
                out = peer_models.run_bytes(self.name, flat)
                output = ResponseOutput(name="output", shape=[len(out), 1], datatype="BYTES", data=out)
            else:
                arr = np.array(inp.data.__root__ if hasattr(inp.data, "__root__") else inp.data,
                               dtype=np.float64).reshape(inp.shape)
                sums = peer_models.run_numeric(self.name, arr)
                output = ResponseOutput(name="output", shape=[int(sums.shape[0])], datatype="FP32",
                                        data=sums.tolist())
        except peer_models.Refused as e:
            raise InferenceError(str(e))
        return InferenceResponse(model_name=self.name, id=payload.id, outputs=[output])
