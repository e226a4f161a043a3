"""The models the stand-in server runs: real TorchVision models, or fakes.

Real models are TorchVision architectures with RANDOM weights (nothing can be
downloaded here), so their latency is real and their predictions are not;
lull's profiles take accuracies from TorchVision's published ImageNet numbers
(accuracy.json) instead. Fakes sleep a fixed time per batch and import no
torch, so tests that exercise HTTP behaviour start in milliseconds.
"""
import time


class FakeModel:
    """Sleeps base_ms + per_item_ms * batch; predicts len(input) % 1000."""

    def __init__(self, name, base_ms, per_item_ms):
        self.name, self.base_ms, self.per_item_ms = name, base_ms, per_item_ms

    def predict(self, inputs):
        time.sleep((self.base_ms + self.per_item_ms * len(inputs)) / 1000.0)
        return [{"class": len(x) % 1000, "score": 1.0} for x in inputs]


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

    def _tensor(self, raw):
        """An input tensor from a query's bytes: a decoded image when the bytes
        are PNG/JPEG, otherwise the bytes themselves tiled over the image (so any
        payload is a valid, deterministic input)."""
        torch, s = self.torch, self.image_size
        if raw[:4] == b"\x89PNG" or raw[:2] == b"\xff\xd8":
            import torchvision.io
            img = torchvision.io.decode_image(torch.frombuffer(bytearray(raw), dtype=torch.uint8),
                                              mode=torchvision.io.ImageReadMode.RGB)
            img = torch.nn.functional.interpolate(img.unsqueeze(0).float(), size=(s, s)).squeeze(0)
            return (img / 255.0 - 0.45) / 0.225
        flat = torch.frombuffer(bytearray(raw or b"\0"), dtype=torch.uint8).float()
        reps = (3 * s * s + flat.numel() - 1) // flat.numel()
        return (flat.repeat(reps)[: 3 * s * s].view(3, s, s) / 255.0 - 0.45) / 0.225

    def predict(self, inputs):
        torch = self.torch
        with torch.no_grad():
            probs = torch.softmax(self.model(torch.stack([self._tensor(x) for x in inputs])), dim=1)
        score, cls = probs.max(dim=1)
        return [{"class": int(c), "score": round(float(p), 6)} for c, p in zip(cls.tolist(), score.tolist())]


def parse_fake(spec):
    """'name:base_ms:per_item_ms' -> FakeModel."""
    parts = spec.split(":")
    if len(parts) != 3:
        raise ValueError("--fake wants name:base_ms:per_item_ms, got %r" % spec)
    return FakeModel(parts[0], float(parts[1]), float(parts[2]))
