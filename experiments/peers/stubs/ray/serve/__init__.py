def start(*a, **k):
    raise RuntimeError("ray stand-in")
