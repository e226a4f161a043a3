"""Policy sets and libraries as numpy arrays. The file is first checked by
`lull policy show` (format version, checksums, the runtime loader's checks:
the one implementation of those rules), then parsed here with the message
classes protoc generates from schema/policy.proto at build time."""
import dataclasses
import os
from typing import Dict, List

import numpy as np

from . import policy_pb2
from google.protobuf.message import DecodeError

from ._cli import LullError, read_regular_file, run

_MAX_POLICY_BYTES = 1 << 30  # schema/bounded_file.cc's policy cap


def _fields(message):
    """A protobuf message's fields as a dict (repeated fields as lists), so a
    field added to the schema appears without a change here."""
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.label == field.LABEL_REPEATED:
            value = list(value)
        elif field.enum_type is not None:
            value = field.enum_type.values_by_number[value].name
        out[field.name] = value
    return out


@dataclasses.dataclass
class Policy:
    """One compiled policy. model[n, j] and batch[n, j]: the action at queue
    length n (0..N; row 0 is -1, an empty queue has nothing to serve) and slack
    index j (0..J), slack_ms[j] the lower edge of slack interval j. A queue
    longer than N (the overflow state F) is served by overflow_model and
    overflow_batch."""
    load_qps: float
    slack_ms: np.ndarray
    model: np.ndarray
    batch: np.ndarray
    overflow_model: int
    overflow_batch: int
    expected: Dict
    inputs: Dict
    num_states: int
    num_actions: int


@dataclasses.dataclass
class PolicySet:
    """The policies for one worker count, ascending load. models[i] names the
    model index i in Policy.model; accuracy[i] is its accuracy and
    latency_ms[i, b-1] its reduced latency at batch b."""
    task: str
    slo_ms: float
    workers: int
    provenance: str
    models: List[str]
    accuracy: np.ndarray
    latency_ms: np.ndarray
    policies: List[Policy]

    def policy(self, load_qps):
        """The policy compiled for exactly this load."""
        if isinstance(load_qps, bool) or not isinstance(load_qps, (int, float, np.integer, np.floating)):
            raise LullError("load_qps: expected a number, got %r" % (load_qps,))
        for p in self.policies:
            if p.load_qps == load_qps:
                return p
        loads = ", ".join("%g" % p.load_qps for p in self.policies)
        raise LullError("no policy for %g QPS in this set (loads %s)" % (load_qps, loads))


def _policy(message):
    inputs = message.inputs
    n_max = inputs.max_queue
    slack_ms = np.asarray(message.slack_grid_us, dtype=float) / 1000.0
    j1 = len(slack_ms)
    # Rows are (1,0),(1,1),...,(N,J), then F: N*(J+1)+1 of them (checked by
    # the loader `lull policy show` ran).
    table_model = np.asarray(message.action_model, dtype=np.int64)
    table_batch = np.asarray(message.action_batch, dtype=np.int64)
    model = np.full((n_max + 1, j1), -1, dtype=np.int64)
    batch = np.full((n_max + 1, j1), -1, dtype=np.int64)
    model[1:, :] = table_model[:-1].reshape(n_max, j1)
    batch[1:, :] = table_batch[:-1].reshape(n_max, j1)
    return Policy(load_qps=inputs.load_qps, slack_ms=slack_ms, model=model, batch=batch,
                  overflow_model=int(table_model[-1]), overflow_batch=int(table_batch[-1]),
                  expected=_fields(message.expected), inputs=_fields(inputs),
                  num_states=message.num_states, num_actions=message.num_actions)


def _policy_set(message):
    width = max((len(m.latency_us) for m in message.models), default=0)
    latency_ms = np.full((len(message.models), width), np.nan)
    for i, m in enumerate(message.models):
        latency_ms[i, :len(m.latency_us)] = np.asarray(m.latency_us) / 1000.0
    return PolicySet(task=message.task, slo_ms=message.slo_ms, workers=message.workers,
                     provenance=message.provenance, models=[m.name for m in message.models],
                     accuracy=np.asarray([m.accuracy for m in message.models], dtype=float),
                     latency_ms=latency_ms, policies=[_policy(p) for p in message.policies])


def _verified_bytes(path):
    """The file's bytes once `lull policy show` has accepted that same content
    (read before and after the check, so a file replaced meanwhile is not
    taken unchecked)."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode(errors="replace")
    before = read_regular_file(path, "policy file", _MAX_POLICY_BYTES)
    run("policy", "show", path)
    if read_regular_file(path, "policy file", _MAX_POLICY_BYTES) != before:
        raise LullError("%s: changed while being read; read it again" % path)
    return before


def read_policy_library(path):
    """Every policy set in a policy library file, ascending workers (a
    policy-set file reads as a library of one)."""
    data = _verified_bytes(path)
    # The same file-kind tests as schema/policy_file.cc and fleet_file.cc: a
    # library holds sets (field 16) and a fleet policy classes (field 17),
    # which a policy set never has.
    try:
        library = policy_pb2.PolicyLibrary.FromString(data)
        if library.sets:
            return [_policy_set(s) for s in library.sets]
        fleet = policy_pb2.FleetPolicy.FromString(data)
        if fleet.classes:
            raise LullError("%s: a fleet policy (%d SLO classes), not a policy set or library; "
                            "lull policy show lists its classes" % (path, len(fleet.classes)))
        return [_policy_set(policy_pb2.PolicySet.FromString(data))]
    except DecodeError as e:
        raise LullError("%s: cannot parse the policy file (%s)" % (path, e)) from None


def read_policy_set(path, workers=None):
    """One policy set: the file's only set, or from a library the set for
    `workers`."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, (int, np.integer))):
        raise LullError("workers: expected a whole number of workers, got %r" % (workers,))
    sets = read_policy_library(path)
    counts = ", ".join(str(s.workers) for s in sets)
    if workers is None:
        if len(sets) == 1:
            return sets[0]
        raise LullError("%s is a policy library (workers %s): pick a set with workers=K" % (path, counts))
    for s in sets:
        if s.workers == workers:
            return s
    raise LullError("workers: %s has no set for %d workers (it has %s)" % (path, workers, counts))
