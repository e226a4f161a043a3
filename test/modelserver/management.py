"""TorchServe's model management API, as the stand-in server answers it.

lull's resource manager loads and unloads model variants on a worker while
it serves (docs/operators-guide.md); on a real TorchServe that is the management API
(docs: pytorch/serve docs/management_api.md), so the stand-in implements the
same calls with the same status codes and JSON bodies:

  POST   /models?url=ARCHIVE[&model_name=M][&initial_workers=N][&synchronous=true]
         200 {"status": "Model \\"M\\" Version: 1.0 registered with N initial workers"}
             (with 0 workers: "... registered with 0 initial workers. Use scale workers
             API to add workers for the model.")
         202 {"status": "Processing worker updates..."}  (synchronous=false, N > 0; loads
             in the background)
         400 BadRequestException "Parameter url is required."
         404 ModelNotFoundException "Model not found in model store: ARCHIVE"
         409 ConflictStatusException "Model version 1.0 is already registered for model M"
         500 InternalServerException "Failed to start workers for model M version: 1.0"
             (the model failed to load; it is left unregistered, as TorchServe does)
  DELETE /models/M[/VERSION]  200 {"status": "Model \\"M\\" unregistered"}; 404 "Model not found: M"

The "model store" is what the server can load: every model it was started
with, the --store-fake ones, the whole --replay-profile (also the models
--models left out), and, when it runs TorchVision models, any TorchVision
name. An archive URL names a store entry by its file name without ".mar"
(".../resnet18.mar" -> resnet18). --fail-load NAME makes loading that entry
fail (after --load-delay-ms), the fault tests' broken model.
"""
import json
import os
import threading
import time

import lull_batch_contract as contract

VERSION = "1.0"


class ModelRegistry:
    """The registered models and the store they come from. Thread-safe."""

    def __init__(self, loaded, store, fail_load=(), load_delay_ms=0, make_torchvision=None):
        self.lock = threading.Lock()
        self.models = dict(loaded)       # name -> model, serving
        self.workers = {n: 1 for n in loaded}  # name -> worker count (0 while loading)
        self.at_startup = set(loaded)
        self.urls = {n: n + ".mar" for n in loaded}  # name -> the archive URL it was registered from
        self.store = dict(store)         # archive name -> model
        self.store.update(loaded)
        self.fail_load = set(fail_load)
        self.load_delay_ms = load_delay_ms
        self.make_torchvision = make_torchvision  # name -> model, or None (no torch)

    def get(self, name):
        """The model serving under `name` with a READY worker, or None."""
        with self.lock:
            return self.models.get(name) if self.workers.get(name) else None

    def names(self):
        with self.lock:
            return sorted(self.models)

    def store_names(self):
        """Every model it can load, loaded or not."""
        with self.lock:
            return sorted(set(self.store) | set(self.models))

    def loaded_at_startup(self, name):
        return name in self.at_startup

    def url(self, name):
        with self.lock:
            return self.urls.get(name, name + ".mar")

    def worker_count(self, name):
        """None when not registered."""
        with self.lock:
            return self.workers.get(name) if name in self.models else None

    def _resolve(self, url):
        archive = os.path.basename(url.split("?", 1)[0])
        if archive.endswith(".mar"):
            archive = archive[:-len(".mar")]
        if archive in self.store:
            return archive, self.store[archive]
        if self.make_torchvision is not None and archive:
            try:
                return archive, self.make_torchvision(archive)
            except ValueError:
                pass
        return archive, None

    def register(self, params):
        """(HTTP code, JSON body) for POST /models with query `params` (dict of str)."""
        url = params.get("url", "")
        if not url:
            return 400, contract.error_body(400, "BadRequestException", "Parameter url is required.")
        archive, model = self._resolve(url)
        if model is None:
            return 404, contract.error_body(404, "ModelNotFoundException", "Model not found in model store: " + url)
        name = params.get("model_name") or archive
        try:
            workers = int(params.get("initial_workers", "0"))
        except ValueError:
            return 400, contract.error_body(400, "BadRequestException", "Invalid initial_workers: " + params["initial_workers"])
        synchronous = params.get("synchronous", "false").lower() == "true"
        with self.lock:
            if name in self.models:
                return 409, contract.error_body(409, "ConflictStatusException",
                                  "Model version %s is already registered for model %s" % (VERSION, name))
            self.models[name] = model
            self.workers[name] = 0
            self.urls[name] = url
        if workers == 0:
            return 200, status('Model "%s" Version: %s registered with 0 initial workers. '
                               "Use scale workers API to add workers for the model." % (name, VERSION))
        if not synchronous:
            threading.Thread(target=self._start_workers, args=(name, archive, workers), daemon=True).start()
            return 202, status("Processing worker updates...")
        if not self._start_workers(name, archive, workers):
            return 500, contract.error_body(500, "InternalServerException",
                              "Failed to start workers for model %s version: %s" % (name, VERSION))
        return 200, status('Model "%s" Version: %s registered with %d initial workers' % (name, VERSION, workers))

    def _start_workers(self, name, archive, workers):
        """Loads the model (sleeping --load-delay-ms); False, and unregistered, when it fails to load."""
        if self.load_delay_ms > 0:
            time.sleep(self.load_delay_ms / 1000.0)
        with self.lock:
            if archive in self.fail_load:
                self.models.pop(name, None)
                self.workers.pop(name, None)
                self.urls.pop(name, None)
                return False
            if name in self.models:
                self.workers[name] = workers
        return True

    def unregister(self, name):
        with self.lock:
            if name not in self.models:
                return 404, contract.error_body(404, "ModelNotFoundException", "Model not found: " + name)
            del self.models[name]
            del self.workers[name]
            self.urls.pop(name, None)
            self.at_startup.discard(name)
        return 200, status('Model "%s" unregistered' % name)


def status(text):
    """TorchServe's success shape."""
    return json.dumps({"status": text})
