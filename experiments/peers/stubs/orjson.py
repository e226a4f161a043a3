# Thin stand-in for orjson over the standard json module (peers test only).
import json as _json
OPT_NON_STR_KEYS = 1
OPT_SERIALIZE_NUMPY = 2
OPT_INDENT_2 = 4
OPT_SORT_KEYS = 8
class JSONDecodeError(ValueError):
    pass
JSONEncodeError = TypeError
def _default(o):
    try:
        import numpy as np
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:
        pass
    if isinstance(o, (bytes, bytearray)):
        return o.decode()
    if hasattr(o, "dict"):
        return o.dict()
    raise TypeError(f"not serializable: {type(o)}")
def dumps(obj, default=None, option=0):
    def d(o):
        if default is not None:
            try:
                return default(o)
            except TypeError:
                pass
        return _default(o)
    return _json.dumps(obj, default=d, separators=(",", ":"), ensure_ascii=False).encode()
def loads(s):
    if isinstance(s, (bytes, bytearray, memoryview)):
        s = bytes(s).decode()
    try:
        return _json.loads(s)
    except _json.JSONDecodeError as e:
        raise JSONDecodeError(str(e))
import sys as _sys
orjson = _sys.modules[__name__]  # `from orjson import orjson` (KServe's client)
