"""The models the stand-in server runs: real TorchVision models, or fakes.

Real models are TorchVision architectures with RANDOM weights (nothing can be
downloaded here), so their latency is real and their predictions are not;
lull's profiles take accuracies from TorchVision's published ImageNet numbers
(accuracy.json) instead. Fakes sleep instead of computing and import no
torch, so tests that exercise HTTP behaviour start in milliseconds: a fixed
sleep per batch (--fake), or a latency replayed from a profile (--replay-profile),
which makes an end-to-end run whose latencies are the ones lull planned with.
"""
import bisect
import json
import random
import time

import lull_batch_contract as contract


def check_marker(raw):
    """Rejects an input carrying the contract's malformed-input marker."""
    if raw.startswith(contract.MALFORMED_MARKER):
        raise contract.InputError("malformed input (it starts with %s)" % contract.MALFORMED_MARKER.decode())
    return raw


class FakeModel:
    """Sleeps base_ms + per_item_ms * batch; predicts len(input) % 1000."""

    def __init__(self, name, base_ms, per_item_ms):
        self.name, self.base_ms, self.per_item_ms = name, base_ms, per_item_ms

    def latency_s(self, batch):
        return (self.base_ms + self.per_item_ms * batch) / 1000.0

    def prepare(self, raw):
        """The input as predict takes it; raises InputError to reject it."""
        return check_marker(raw)

    def predict(self, inputs):
        time.sleep(self.latency_s(len(inputs)))
        return [{"class": len(x) % 1000, "score": 1.0} for x in inputs]


class ReplayModel(FakeModel):
    """A fake whose batch latency is drawn from a profile's samples for that
    batch size (or its latency_s when it has no samples). A batch size the
    profile lacks is interpolated linearly between the nearest ones it has
    (extrapolated from the last two past the largest): draws, not the compiler's
    OLS fill (mdp-spec 1.1), so a profile meant for replay lists every batch
    size its policy can choose. `rng` is shared by a server's models; the
    server draws under its device lock, one batch at a time."""

    def __init__(self, name, samples_by_batch, rng):
        super().__init__(name, 0, 0)
        self.batches = sorted(samples_by_batch)
        self.samples = samples_by_batch
        self.rng = rng

    def _draw(self, batch):
        return self.rng.choice(self.samples[batch])

    def latency_s(self, batch):
        if batch in self.samples:
            return self._draw(batch)
        if len(self.batches) == 1:
            return self._draw(self.batches[0])
        i = min(max(bisect.bisect_left(self.batches, batch), 1), len(self.batches) - 1)
        lo, hi = self.batches[i - 1], self.batches[i]
        a, b = self._draw(lo), self._draw(hi)
        return max(0.0, a + (b - a) * (batch - lo) / (hi - lo))


class TorchVisionModel:
    """A TorchVision classifier with random weights, run on the CPU."""

    def __init__(self, name, image_size):
        import torch
        import torchvision
        if not hasattr(torchvision.models, name):
            raise ValueError("torchvision has no model named %r" % name)
        torch.manual_seed(0)
        self.torch = torch
        self.name, self.image_size = name, image_size
        self.model = getattr(torchvision.models, name)(weights=None).eval()
        with torch.no_grad():  # the first call pays one-off costs; do it now
            self.model(torch.zeros(1, 3, image_size, image_size))

    def memory_bytes(self):
        """The model's parameter and buffer bytes: what GET /models/{name}
        reports as memoryUsage (TorchServe reports its worker process's RSS)."""
        return sum(t.numel() * t.element_size() for t in list(self.model.parameters()) + list(self.model.buffers()))

    def prepare(self, raw):
        """An input tensor from a query's bytes: a decoded image when the bytes
        are PNG/JPEG (rejected, as the TorchServe handler rejects it, when it
        does not decode), otherwise the bytes themselves tiled over the image
        (so lull loadgen's synthetic payloads are valid, deterministic inputs)."""
        torch, s = self.torch, self.image_size
        check_marker(raw)
        if raw[:4] == b"\x89PNG" or raw[:2] == b"\xff\xd8":
            import torchvision.io
            try:
                img = torchvision.io.decode_image(torch.frombuffer(bytearray(raw), dtype=torch.uint8),
                                                  mode=torchvision.io.ImageReadMode.RGB)
            except RuntimeError as e:
                raise contract.InputError("not a decodable image (%s)" % str(e).splitlines()[0])
            img = torch.nn.functional.interpolate(img.unsqueeze(0).float(), size=(s, s)).squeeze(0)
            return (img / 255.0 - 0.45) / 0.225
        flat = torch.frombuffer(bytearray(raw or b"\0"), dtype=torch.uint8).float()
        reps = (3 * s * s + flat.numel() - 1) // flat.numel()
        return (flat.repeat(reps)[: 3 * s * s].view(3, s, s) / 255.0 - 0.45) / 0.225

    def predict(self, inputs):
        """Predictions for prepared inputs (tensors), as one batch."""
        torch = self.torch
        with torch.no_grad():
            probs = torch.softmax(self.model(torch.stack(inputs)), dim=1)
        score, cls = probs.max(dim=1)
        return [{"class": int(c), "score": round(float(p), 6)} for c, p in zip(cls.tolist(), score.tolist())]


def parse_fake(spec):
    """'name:base_ms:per_item_ms' -> FakeModel."""
    parts = spec.split(":")
    if len(parts) != 3:
        raise ValueError("--fake wants name:base_ms:per_item_ms, got %r" % spec)
    return FakeModel(parts[0], float(parts[1]), float(parts[2]))


def load_replay(path, names, seed):
    """The models `names` (all when empty) of the lull profile set at `path`, as
    ReplayModels drawing from one random.Random(seed). Raises ValueError naming
    the file and field on anything it cannot replay."""
    with open(path) as f:
        try:
            profile = json.load(f)
        except ValueError as e:
            raise ValueError("%s: not JSON (%s)" % (path, e))
    rng = random.Random(seed)
    models = {}
    for i, m in enumerate((profile.get("models") or []) if isinstance(profile, dict) else []):
        where = "%s: models[%d]" % (path, i)
        samples = {}
        try:
            for lat in m["latencies"]:
                values = lat.get("samples_s") or ([lat["latency_s"]] if lat.get("latency_s") else [])
                samples[int(lat["batch"])] = [float(v) for v in values]
                if not values or int(lat["batch"]) < 1:
                    raise ValueError
            if not samples:
                raise ValueError
            models[str(m["name"])] = ReplayModel(str(m["name"]), samples, rng)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError("%s: want name and latencies of {batch >= 1, samples_s or latency_s}" % where)
    if not models:
        raise ValueError("%s: models: none" % path)
    missing = [n for n in names if n not in models]
    if missing:
        raise ValueError("%s: models: no %s (it has %s)" % (path, ",".join(missing), ",".join(sorted(models))))
    return {n: models[n] for n in (names or sorted(models))}
