"""Running the lull binary: where it is, keyword arguments as its flags, and
its one-line errors as LullError. Every rule lives in the CLI; this module only
translates."""
import os
import shutil
import stat
import subprocess

from . import _where


class LullError(Exception):
    """A lull command failed. str() is the CLI's one-line message (it names the
    file, field or flag); .returncode is its exit status (2: usage error) and
    .stderr everything it wrote there."""

    def __init__(self, message, returncode=None, stderr=""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class repeat:
    """A flag given once per value (simulate's --fail, --workers-at):
    fail=lull.repeat("0@10:5", "1@20:5"). A plain list is one comma-separated
    value instead (models=["a", "b"] is --models a,b)."""

    def __init__(self, *values):
        self.values = values


def binary():
    """The lull executable: $LULL_BINARY, else the one this package was built
    or installed with, else `lull` on PATH."""
    env = os.environ.get("LULL_BINARY")
    if env:
        return env
    beside = os.path.normpath(os.path.join(os.path.dirname(__file__), _where.LULL_BINARY_FROM_PACKAGE))
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("lull")
    if found:
        return found
    raise LullError("lull binary not found: not at %s nor on PATH (set LULL_BINARY)" % beside)


def read_regular_file(path, what, limit):
    """The bytes of PATH, a regular file of at most `limit` bytes (the CLI's
    rule, schema/bounded_file.h): a FIFO, a device (/dev/zero) or a directory
    raises LullError at once, as does anything else that cannot be read."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode(errors="replace")
    if "\0" in path:
        raise LullError("%r: a path cannot hold a NUL byte" % path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise LullError("%s: cannot open: %s" % (path, e.strerror)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LullError("%s: not a regular file (a %s must be one)" % (path, what))
        if st.st_size > limit:
            raise LullError("%s: %d bytes, more than a %s may hold (%d)" % (path, st.st_size, what, limit))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise LullError("%s: read failed: %s" % (path, e.strerror)) from None
    finally:
        os.close(fd)
    if size > limit:
        raise LullError("%s: grew past %d bytes while it was read" % (path, limit))
    return b"".join(chunks)


def _text(value):
    # repr() of a float round-trips; the CLI parses it back to the same double.
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def flags(**kwargs):
    """Keyword arguments as CLI flags, 1:1: slo_ms=150 is --slo-ms 150, md=True
    is --md (False or None: left out), a list, tuple or range is comma-separated, repeat(...)
    gives the flag once per value."""
    args = []
    for key, value in kwargs.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, repeat):
            for v in value.values:
                args += [flag, _text(v)]
        elif isinstance(value, (list, tuple, range)):  # range(20, 201, 20): its values, 20,40,...,200
            if len(value) == 0:
                raise LullError("%s: an empty %s" % (flag, type(value).__name__))
            args += [flag, ",".join(_text(v) for v in value)]
        else:
            args += [flag, _text(value)]
    return args


def run(*args):
    """Runs `lull ARGS...`; returns its stdout (bytes). A non-zero exit raises
    LullError with the last line the CLI wrote to stderr, its one-line error;
    so does an argument no command line can hold (a NUL byte) or a binary
    that cannot be started."""
    for a in args:
        if "\0" in a:
            raise LullError("%r: an argument cannot hold a NUL byte" % a)
    try:
        proc = subprocess.run([binary(), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    except OSError as e:
        raise LullError("%s: cannot run: %s" % (binary(), e.strerror or e)) from None
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        lines = [line for line in stderr.splitlines() if line.strip()]
        message = lines[-1] if lines else "lull %s exited with status %d" % (args[0], proc.returncode)
        raise LullError(message, proc.returncode, stderr)
    return proc.stdout
