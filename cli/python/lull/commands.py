"""compile, plan and simulate from Python: the CLI commands with the same
flags, their JSON outputs returned as dicts."""
import json
import os
import tempfile

from ._cli import LullError, flags, read_regular_file, run

_MAX_JSON_BYTES = 1 << 30


def _json_of(path, command, json_flag):
    """The JSON the command wrote to PATH; LullError when it is not JSON (a
    device such as /dev/null named as the output, or a file cut short)."""
    data = read_regular_file(path, "JSON output (%s=)" % json_flag, _MAX_JSON_BYTES)
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise LullError("%s: lull %s wrote no JSON there (%s)" % (path, command, e)) from None


def _run_for_json(command, json_flag, kwargs):
    """Runs `lull COMMAND` with its JSON output at kwargs[json_flag] (a temp
    file when not given or '-') and returns that JSON parsed."""
    target = kwargs.get(json_flag)
    if target is not None and target != "-":
        run(*command, *flags(**kwargs))
        return _json_of(os.fspath(target), command[0], json_flag)
    with tempfile.TemporaryDirectory(prefix="lull-py-") as tmp:
        kwargs = dict(kwargs, **{json_flag: os.path.join(tmp, "out.json")})
        run(*command, *flags(**kwargs))
        return _json_of(kwargs[json_flag], command[0], json_flag)


def compile(**kwargs):
    """`lull compile`: profiles=..., slo_ms=..., workers=..., load_qps=...,
    out=... (the policy set or library written; without it, a new temp file
    the caller removes), and any other compile flag. Returns the --report JSON
    (written to a temp file unless report= names one); without out=, with
    "out": the temp policy file's path."""
    if kwargs.get("out") == "-":
        raise LullError("lull.compile: out='-' would write the policy file to a pipe nobody reads; name a file")
    if kwargs.get("out") is not None:
        return _run_for_json(["compile"], "report", kwargs)
    fd, path = tempfile.mkstemp(prefix="lull-py-", suffix=".pb")  # outlives the call: report["out"] names it
    os.close(fd)
    try:
        report = _run_for_json(["compile"], "report", dict(kwargs, out=path))
    except BaseException:
        os.unlink(path)
        raise
    report["out"] = path
    return report


def plan(**kwargs):
    """`lull plan`: profiles=..., slo_ms=..., max_violation=..., load_qps=...
    or trace=...; any other plan flag. Returns the plan JSON (--out; a temp file
    unless out= names one)."""
    return _run_for_json(["plan"], "out", kwargs)


def simulate(**kwargs):
    """`lull simulate`: policies=..., workers=..., trace=...; any other simulate
    flag. Returns the result JSON (--out; a temp file unless out= names one)."""
    return _run_for_json(["simulate"], "out", kwargs)
