"""lull from Python: compile, plan and simulate through the lull CLI (same
flags as keyword arguments, same validation, results as dicts) and policy
files read into numpy arrays. docs/user-guide.md says why it wraps the CLI."""
from ._cli import LullError, binary, repeat
from .commands import compile, plan, simulate
from .policy_files import Policy, PolicySet, read_policy_library, read_policy_set

__all__ = ["LullError", "binary", "repeat", "compile", "plan", "simulate", "Policy", "PolicySet",
           "read_policy_library", "read_policy_set"]
