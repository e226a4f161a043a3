"""What the peer models compute, shared by the KServe and MLServer launchers.

Each model sleeps base + per_item * B ms for a batch of B rows (the lines of
test/data/replay_profile.json, so a policy compiled from it fits), then:
  BYTES rows (text): one BYTES output row per input row, holding the JSON
      {"class": len(text) % 10, "score": 1.0, "model": NAME};
  numeric rows [B, ...]: one FP32 output row per input row, its sum.
An input row holding "poison" (text) or a negative number makes the model
refuse the WHOLE request, as real models do: the caller raises its server's
own invalid-input error, which answers 400 {"error": MESSAGE}.
"""
import json
import time

LINES_MS = {"tiny_net": (3.8, 1.2), "small_net": (9.0, 3.0), "medium_net": (19.0, 6.0), "large_net": (34.0, 11.0)}


class Refused(ValueError):
    pass


def _text(element):
    if isinstance(element, (bytes, bytearray)):
        return bytes(element).decode("utf-8", "replace")
    return str(element)


def run_bytes(model, rows):
    """rows: list of str/bytes, one per query. Returns list of JSON texts."""
    base, per = LINES_MS.get(model, (2.0, 0.5))
    time.sleep((base + per * len(rows)) / 1000.0)
    out = []
    for i, r in enumerate(rows):
        t = _text(r)
        if "poison" in t:
            raise Refused(f"row {i}: input holds poison ({t[:40]!r})")
        out.append(json.dumps({"class": len(t) % 10, "score": 1.0, "model": model}))
    return out


def run_numeric(model, array):
    """array: numpy array [B, ...]. Returns numpy FP32 [B] (row sums)."""
    import numpy as np
    base, per = LINES_MS.get(model, (2.0, 0.5))
    b = int(array.shape[0]) if array.ndim else 1
    time.sleep((base + per * b) / 1000.0)
    if (array < 0).any():
        raise Refused("a negative value in the input")
    return array.reshape(b, -1).sum(axis=1).astype(np.float32)
