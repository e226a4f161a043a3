"""TorchServe custom handler for the text task (BERT sequence classifiers,
e.g. the GLUE-MNLI models of lull's text profiles) under lull's batch contract;
lull_batch_handler.py is its image twin.

Serving a Hugging Face model with it on a real TorchServe (0.11 or later;
transformers installed beside it), from the repository root:

    # 1. The model's files (config.json, model.safetensors or pytorch_model.bin,
    #    the tokenizer's files) in one directory, e.g. with
    #    AutoModelForSequenceClassification.from_pretrained(NAME).save_pretrained("bert_base")
    #    and AutoTokenizer.from_pretrained(NAME).save_pretrained("bert_base").
    # 2. The archive: this handler, the contract module it imports, the model's files:
    mkdir -p model_store
    torch-model-archiver --model-name bert_base --version 1.0 \
        --serialized-file bert_base/model.safetensors \
        --handler packaging/torchserve/lull_text_handler.py \
        --extra-files "packaging/torchserve/lull_batch_contract.py,$(ls bert_base/* | grep -v safetensors | paste -sd,)" \
        --export-path model_store
    # 3. config.properties: as for the image handler (lull_batch_handler.py), and
    #      enable_model_api=true   # off by default since TorchServe 0.11; lull's model
    #                              # variants (--variant-sets) load and unload models with it
    # 4. torchserve --start --ncs --model-store model_store --ts-config config.properties \
    #        --models bert_base=bert_base.mar
    #    then lull profile / lull serve as in lull_batch_handler.py.

Each query's input is the text: UTF-8 bytes (curl --data-binary 'a sentence'),
or a JSON object {"text": "...", "text_pair": "..."} for a sentence pair
(MNLI's premise and hypothesis; lull's front end passes such a JSON body to
the model as it is). Every input of every TorchServe request is tokenized
together (padded to the longest, truncated at max_length tokens) and runs as
ONE forward pass. The prediction of each query is {"class": index,
"label": the model's name for it, "score": its softmax probability}. An
input that is not UTF-8 text, or JSON without a string "text", gets a
per-input error (400, InvalidInput) and the rest of the batch is served.
"""
import json

from ts.torch_handler.base_handler import BaseHandler

import lull_batch_contract as contract

MAX_LENGTH = 128  # tokens; BERT's positions allow 512, queries are sentences


def read_text(raw):
    """(text, text_pair or None) of one input's bytes; InputError when it has none."""
    try:
        s = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else str(raw)
    except UnicodeDecodeError:
        raise contract.InputError("not UTF-8 text")
    stripped = s.lstrip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(s)
        except ValueError:
            obj = None  # text that happens to start with '{'
        if isinstance(obj, dict):
            text, pair = obj.get("text"), obj.get("text_pair")
            if not isinstance(text, str) or not text or (pair is not None and not isinstance(pair, str)):
                raise contract.InputError('JSON input needs a non-empty string "text" (and "text_pair" a string)')
            return text, pair
    if not s.strip():
        raise contract.InputError("empty text")
    return s, None


class LullTextHandler(BaseHandler):
    def initialize(self, context):
        # A Hugging Face model directory instead of BaseHandler's TorchScript file.
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        model_dir = context.system_properties.get("model_dir")
        gpu = context.system_properties.get("gpu_id")
        self.device = torch.device("cuda:%s" % gpu if torch.cuda.is_available() and gpu is not None else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_dir).to(self.device).eval()
        self.labels = getattr(self.model.config, "id2label", {}) or {}
        self.initialized = True

    def preprocess(self, data):
        # Each TorchServe request's inputs (a lull batch each).
        return contract.decode_requests(data)

    def _forward(self, texts):
        import torch
        firsts = [t for t, _ in texts]
        pairs = [p for _, p in texts]
        if any(p is not None for p in pairs):  # a batch mixing pairs and single texts: "" as the missing second
            pairs = [p or "" for p in pairs]
        enc = self.tokenizer(firsts, pairs if any(pairs) else None, padding=True,
                             truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
        with torch.no_grad():
            probs = torch.softmax(self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits, dim=1)
        score, cls = probs.max(dim=1)
        return [{"class": int(c), "label": self.labels.get(int(c), str(int(c))), "score": float(s)}
                for c, s in zip(cls.tolist(), score.tolist())]

    def inference(self, data, *args, **kwargs):
        # All accepted inputs of all requests run as ONE forward pass.
        return contract.answer_requests(data, read_text, self._forward)

    def postprocess(self, data):
        return [contract.encode_predictions(answers) for answers in data]

