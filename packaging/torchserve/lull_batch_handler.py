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
        --handler packaging/torchserve/lull_batch_handler.py \
        --extra-files packaging/torchserve/lull_batch_contract.py \
        --export-path model_store
    # 3. config.properties (what lull relies on):
    #      inference_address=http://127.0.0.1:8080
    #      management_address=http://127.0.0.1:8081
    #      max_request_size=6553500      # >= lull serve --max-request-bytes (same default)
    #      max_response_size=6553500
    #      default_workers_per_model=1   # one worker per device, as lull's profiles assume
    #      enable_model_api=true         # off by default since TorchServe 0.11: lull's model
    #                                    # variants (--variant-sets) and autoscaled workers load
    #                                    # and unload models through the management API
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
{"class": top-1 ImageNet index, "score": its softmax probability}. An input
that is not a decodable image gets a per-input error (400, InvalidInput) in
its place and the rest of the batch is served; only a failure of the model
itself fails the request (TorchServe answers it 503).
"""
import io

import torch
from ts.torch_handler.base_handler import BaseHandler

import lull_batch_contract as contract


class LullBatchHandler(BaseHandler):
    image_size = 224

    def preprocess(self, data):
        # Each TorchServe request's inputs (a lull batch each).
        return contract.decode_requests(data)

    def _image_tensor(self, raw):
        from PIL import Image, UnidentifiedImageError
        from torchvision import transforms
        try:
            img = Image.open(io.BytesIO(raw)).convert("RGB")
        except (UnidentifiedImageError, OSError, ValueError) as e:
            raise contract.InputError("not a decodable image (%s)" % e)
        t = transforms.Compose([
            transforms.Resize(self.image_size),
            transforms.CenterCrop(self.image_size),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])
        return t(img)

    def _forward(self, tensors):
        with torch.no_grad():
            probs = torch.softmax(self.model(torch.stack(tensors).to(self.device)), dim=1)
        score, cls = probs.max(dim=1)
        return [{"class": int(c), "score": float(s)} for c, s in zip(cls.tolist(), score.tolist())]

    def inference(self, data, *args, **kwargs):
        # All accepted inputs of all requests run as ONE forward pass.
        return contract.answer_requests(data, self._image_tensor, self._forward)

    def postprocess(self, data):
        return [contract.encode_predictions(answers) for answers in data]
