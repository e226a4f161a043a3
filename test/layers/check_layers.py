#!/usr/bin/env python3
"""The runtime's layers depend one way (docs/architecture.md, "Layers").

Every #include "..." of a file under runtime/ must name a file of its own
layer or of a layer it may use, as its library's target_link_libraries
says. The table below is that rule; a header that reaches upward (the core
including serve/, torchserve/ including manager/, ...) or two layers that
include each other fail this check with one line per offending include.
Usage: check_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

# layer -> the layers (and top-level folders) its files may include.
# log (runtime/log/, the log facade) is a leaf like schema: every layer may
# use it, and it uses nothing of lull but schema's header-only one_line.h.
MAY_USE = {
    "log": {"log", "schema"},
    "core": {"core", "log", "schema"},
    "net": {"net", "log"},
    "torchserve": {"torchserve", "net", "core", "log", "schema"},
    "v2": {"v2", "torchserve", "net", "core", "log", "schema"},
    "serve": {"serve", "net", "core", "log", "schema"},
    "manager": {"manager", "torchserve", "serve", "net", "core", "log", "schema"},
    "sim": {"sim", "manager", "core", "log", "schema"},
    "server": {"server", "manager", "serve", "torchserve", "net", "core", "log", "schema"},
}
# Files of the manager layer in lull_manager, the library lull_sim links:
# they may use the core (and the net layer's text formats) only, since the
# simulator includes them. The rest of manager/ (lull_worker_pools) runs real
# workers over HTTP. Read from runtime/manager/CMakeLists.txt, which says it.
def pure_manager(root: pathlib.Path) -> set:
    text = (root / "runtime" / "manager" / "CMakeLists.txt").read_text()
    block = re.search(r"add_library\(lull_manager\s+STATIC(.*?)\)", text, re.S)
    if block is None:
        raise SystemExit("runtime/manager/CMakeLists.txt: no add_library(lull_manager STATIC ...)")
    return {pathlib.Path(t).stem for t in block.group(1).split() if t.endswith(".cc")}


PURE_MANAGER_MAY_USE = {"manager", "net", "core", "log", "schema"}


def layer_of(rel: str):
    """The layer of a path relative to the source root; None outside runtime/ and schema/."""
    parts = rel.split("/")
    if parts[0] == "schema":
        return "schema"
    if parts[0] != "runtime":
        return None
    if len(parts) == 2:
        return "core"
    return parts[1] if parts[1] in MAY_USE else None


def cycle_in_table():
    """Two layers that may include each other (directly or through others); None if there are none."""
    def reach(layer, seen):
        for used in MAY_USE.get(layer, ()):
            if used != layer and used not in seen:
                seen.add(used)
                reach(used, seen)
        return seen
    for layer in MAY_USE:
        if layer in reach(layer, set()):
            return layer
    return None


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    PURE_MANAGER = pure_manager(root)
    if cycle_in_table():
        print(f"check_layers: the table lets {cycle_in_table()} include itself through another layer")
        return 1
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    errors = []
    checked = 0
    for path in sorted((root / "runtime").rglob("*")):
        if path.suffix not in (".h", ".cc", ".cu", ".cuh"):
            continue
        rel = path.relative_to(root).as_posix()
        layer = layer_of(rel)
        if layer is None:
            errors.append(f"{rel}: in no layer (add its folder to test/layers/check_layers.py)")
            continue
        allowed = MAY_USE[layer]
        if layer == "manager" and path.stem in PURE_MANAGER:
            allowed = PURE_MANAGER_MAY_USE
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = include.match(line)
            if not m:
                continue
            checked += 1
            target = layer_of(m.group(1))
            if target is None or target not in allowed:
                errors.append(f"{rel}:{n}: {layer} includes {m.group(1)} "
                              f"({target or 'outside runtime/'}; {layer} may use {', '.join(sorted(allowed))})")
            elif layer == "sim" and target == "manager" and pathlib.Path(m.group(1)).stem not in PURE_MANAGER:
                errors.append(f"{rel}:{n}: sim includes {m.group(1)}, which is not in lull_manager (the library lull_sim links)")
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"check_layers: {checked} includes under runtime/ follow the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
