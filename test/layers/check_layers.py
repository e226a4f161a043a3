#!/usr/bin/env python3
"""The runtime's layers depend one way (docs/architecture.md, "Layers").

LAYERS below is the one statement of the rule: each folder under runtime/,
the library its CMakeLists.txt builds, the namespace its files declare, and
the layers its files may include. The check fails, one line per offence, on
  - an #include "..." of a layer the table does not allow (or a cycle in it),
  - a folder whose CMakeLists.txt does not build that library,
  - a file declaring a namespace other than its folder's,
  - docs/architecture.md's table differing from the one this prints.
Usage: check_layers.py SOURCE_DIR          (the check)
       check_layers.py SOURCE_DIR --table  (the Markdown table for the docs)
"""
import pathlib
import re
import sys

# folder -> (library, namespace, layers it may include). Bottom layer first.
# log and schema are leaves: every layer may include them.
BASE = ["log", "schema"]
LAYERS = {
    "log": ("lull_log", "lull::log", ["schema"]),
    "core": ("lull_core", "lull::core", BASE),
    "net": ("lull_net", "lull::net", ["log"]),
    "upstream/torchserve": ("lull_torchserve", "lull::torchserve", ["net", "core"] + BASE),
    "upstream/v2": ("lull_v2", "lull::v2", ["upstream/torchserve", "net", "core"] + BASE),
    "frontend": ("lull_frontend", "lull::frontend", ["net", "core"] + BASE),
    "session": ("lull_session", "lull::session", ["frontend", "net", "core"] + BASE),
    "manager": ("lull_manager", "lull::manager", ["net", "core"] + BASE),
    "pools": ("lull_pools", "lull::pools",
              ["manager", "session", "frontend", "upstream/torchserve", "net", "core"] + BASE),
    "sim": ("lull_sim", "lull::sim", ["manager", "core"] + BASE),
    "server": ("lull_server", "lull::server",
               ["pools", "manager", "session", "frontend", "upstream/torchserve", "net", "core"] + BASE),
}
# Namespaces a folder's files may open besides their own: the log facade's
# formatting hooks specialize fmt's templates, the Prometheus text writer
# nests its own, and forward declarations of schema's generated types.
EXTRA_NAMESPACES = {"fmt", "lull::net::prom", "lull::schema", "beast", "http", "net", "fs"}
MARK_BEGIN = "<!-- layers table: test/layers/check_layers.py --table -->"
MARK_END = "<!-- end of layers table -->"


def layer_of(rel: str):
    """The layer of a path relative to the source root; None outside runtime/ and schema/."""
    parts = rel.split("/")
    if parts[0] == "schema":
        return "schema"
    if parts[0] != "runtime" or len(parts) < 3:
        return None
    folder = "/".join(parts[1:3]) if parts[1] == "upstream" and len(parts) >= 4 else parts[1]
    return folder if folder in LAYERS else None


def cycle_in_table():
    def reach(layer, seen):
        for used in LAYERS.get(layer, (None, None, []))[2]:
            if used != layer and used not in seen:
                seen.add(used)
                reach(used, seen)
        return seen
    for layer in LAYERS:
        if layer in reach(layer, set()):
            return layer
    return None


def table() -> str:
    rows = ["| folder | library | namespace | may include |", "| --- | --- | --- | --- |"]
    for folder, (lib, ns, uses) in LAYERS.items():
        rows.append(f"| `runtime/{folder}/` | `{lib}` | `{ns}` | {', '.join(uses)} |")
    return "\n".join(rows)


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    if "--table" in sys.argv:
        print(table())
        return 0
    errors = []
    if cycle_in_table():
        errors.append(f"check_layers: the table lets {cycle_in_table()} include itself through another layer")
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    namespace = re.compile(r"^namespace\s+([\w:]+)\s*\{")
    checked = 0
    for folder, (lib, ns, _) in LAYERS.items():
        cmake = root / "runtime" / folder / "CMakeLists.txt"
        if not cmake.is_file() or not re.search(rf"add_library\({lib}\b", cmake.read_text()):
            errors.append(f"runtime/{folder}/CMakeLists.txt: does not build {lib}")
    for path in sorted((root / "runtime").rglob("*")):
        if path.suffix not in (".h", ".cc", ".cu", ".cuh"):
            continue
        rel = path.relative_to(root).as_posix()
        layer = layer_of(rel)
        if layer is None:
            errors.append(f"{rel}: in no layer (add its folder to LAYERS in test/layers/check_layers.py)")
            continue
        lib, ns, uses = LAYERS[layer]
        allowed = {layer, *uses}
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if m := namespace.match(line):
                if m.group(1) != ns and m.group(1) not in EXTRA_NAMESPACES:
                    errors.append(f"{rel}:{n}: namespace {m.group(1)} in {layer}, whose namespace is {ns}")
            m = include.match(line)
            if not m:
                continue
            checked += 1
            target = layer_of(m.group(1))
            if target is None or target not in allowed:
                errors.append(f"{rel}:{n}: {layer} includes {m.group(1)} "
                              f"({target or 'outside runtime/'}; {layer} may use {', '.join(sorted(allowed - {layer}))})")
    doc = (root / "docs" / "architecture.md").read_text()
    if MARK_BEGIN not in doc or MARK_END not in doc:
        errors.append("docs/architecture.md: no layers table between the markers (check_layers.py --table prints it)")
    elif doc.split(MARK_BEGIN)[1].split(MARK_END)[0].strip() != table():
        errors.append("docs/architecture.md: the layers table differs from test/layers/check_layers.py --table")
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"check_layers: {checked} includes under runtime/ follow the layers; {len(LAYERS)} folders, "
          "each one library and one namespace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
