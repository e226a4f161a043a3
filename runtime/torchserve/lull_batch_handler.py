"""TorchServe custom handler implementing lull's batch contract.

Serving a model with it on a real TorchServe (0.11 or later), from the
repository root:

    # 1. The model as TorchScript (BaseHandler loads a .pt with torch.jit.load):
    python3 -c "import torch, torchvision; \
        torch.jit.script(torchvision.models.resnet18(weights='DEFAULT').eval()).save('resnet18.pt')"
    # 2. The archive: this handler plus the contract module it imports:
    mkdir -p model_store
    torch-model-archiver --model-name resnet18 --version 1.0 \
        --serialized-file resnet18.pt \
        --handler runtime/torchserve/lull_batch_handler.py \
        --extra-files runtime/torchserve/lull_batch_contract.py \
        --export-path model_store
    # 3. config.properties (what lull relies on):
    #      inference_address=http://127.0.0.1:8080
    #      management_address=http://127.0.0.1:8081
    #      max_request_size=6553500      # >= lull serve --max-request-bytes (same default)
    #      max_response_size=6553500
    #      default_workers_per_model=1   # one worker per device, as lull's profiles assume
    # 4. Start it; each model keeps TorchServe's default batchSize 1 (lull batches
    #    itself, one request per batch; lull serve warns about batchSize > 1 with
    #    maxBatchDelay > 0):
    torchserve --start --ncs --model-store model_store --ts-config config.properties \
        --models resnet18=resnet18.mar
    # 5. Token authorization is on by default: TorchServe writes key_file.json
    #    (management and inference keys) in the directory it was started from.
    lull profile --worker http://127.0.0.1:8080 --models resnet18 --inputs profiles/inputs \
        --torchserve-token-file key_file.json --accuracy ACC.json --out PROFILE.json
    lull serve --policies SET.pb --servers http://127.0.0.1:8080 \
        --management-urls http://127.0.0.1:8081 --torchserve-token-file key_file.json
    # (or start torchserve with --disable-token-auth, and give lull no token file)

Each TorchServe request carries a whole lull batch ({"inputs": [...]}, see
lull_batch_contract.py). TorchServe may itself group several requests
(its batchSize setting); this handler flattens every input of every request
into one tensor, runs ONE forward pass, and splits the predictions back:
one response per TorchServe request, each holding its inputs' predictions in
order. Keep TorchServe's batchSize at 1 for lull: lull already chose the batch.

The input bytes of each query are an encoded image (JPEG/PNG), decoded and
resized to the model's resolution. The prediction of each query is
{"class": top-1 ImageNet index, "score": its softmax probability}.
"""
import io

import torch
from ts.torch_handler.base_handler import BaseHandler

import lull_batch_contract as contract


class LullBatchHandler(BaseHandler):
    image_size = 224

    def preprocess(self, data):
        # Remember how many inputs each TorchServe request brought, to split back.
        self._counts = []
        tensors = []
        for request in data:
            body = request.get("body") if request.get("body") is not None else request.get("data")
            inputs = contract.decode_batch(body)
            self._counts.append(len(inputs))
            tensors.extend(self._image_tensor(x) for x in inputs)
        return torch.stack(tensors).to(self.device)

    def _image_tensor(self, raw):
        from PIL import Image
        from torchvision import transforms
        img = Image.open(io.BytesIO(raw)).convert("RGB")
        t = transforms.Compose([
            transforms.Resize(self.image_size),
            transforms.CenterCrop(self.image_size),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])
        return t(img)

    def inference(self, data, *args, **kwargs):
        with torch.no_grad():
            return self.model(data)

    def postprocess(self, data):
        probs = torch.softmax(data, dim=1)
        score, cls = probs.max(dim=1)
        flat = [{"class": int(c), "score": float(s)} for c, s in zip(cls.tolist(), score.tolist())]
        responses, start = [], 0
        for n in self._counts:
            responses.append(contract.encode_predictions(flat[start:start + n]))
            start += n
        return responses
