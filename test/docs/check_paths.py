#!/usr/bin/env python3
"""Every repository path the docs or a source comment names exists.

Reads README.md and docs/**/*.md (all of their text, and markdown links
relative to the page) and the comments of the sources (// and /* */ in
C++, CUDA and protobuf files; # in Python, shell and CMake files). A word
starting with one of the repository's top folders (runtime/, compiler/,
test/, docs/, ...) is a path; it must name a file or folder of the checkout
(a `*` or a `{a,b}` in it must match one). EXAMPLES lists the few paths
that stand for the user's own files. Also fails on a comment that cites a
tracker's issue number ("issue 11", "#23"): the tracker is not in the
repository, so the number tells a reader nothing.
One line per finding, FILE:LINE: what; exit 1 if there is any.
Usage: check_paths.py SOURCE_DIR
"""
import glob
import pathlib
import re
import sys

TOP = ("runtime", "compiler", "test", "docs", "cli", "schema", "experiments",
       "packaging", "profiles", "policies", "tools", "cmake", ".ci")
# Paths the docs name that a run creates rather than the repository holds.
EXAMPLES = {
    "experiments/results/gpu_bench.md",  # written by experiments/gpu_bench.sh on a GPU machine
}
PATH = re.compile(r"(?<![\w./~$@-])((?:%s)/[\w./*{},+-]*[\w*}/])" % "|".join(re.escape(t) for t in TOP))
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
ISSUE = re.compile(r"\b[Ii]ssues? (?:#?\d+)\b|(?<![\w&#])#\d+\b")

CXX = {".cc", ".h", ".cu", ".cuh", ".proto", ".cpp", ".hpp"}
HASH = {".py", ".sh", ".cmake", ".cfg", ".conf", ".yaml", ".yml", ".toml"}
SKIP_DIRS = {".git", "build", "__pycache__"}


def comments_cxx(text):
    """(line, comment text) of // and /* */ comments, string literals skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == '"' or c == "'":
            if c == '"' and text[max(0, i - 1)] == "R" and text[i + 1:i + 2] != "\\":
                end = text.find("(", i)
                delim = ")" + text[i + 1:end] + '"'
                j = text.find(delim, end)
                j = n if j < 0 else j + len(delim)
                line += text.count("\n", i, j)
                i = j
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i)
            j = n if j < 0 else j
            for k, part in enumerate(text[i + 2:j].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, j)
            i = j + 2
            continue
        i += 1
    return out


def comments_hash(text):
    """(line, comment text) of # comments (a # inside quotes is not one)."""
    out = []
    for no, raw in enumerate(text.split("\n"), 1):
        quote = None
        for k, c in enumerate(raw):
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (k == 0 or raw[k - 1] in " \t("):
                if not raw.startswith("#!"):
                    out.append((no, raw[k + 1:]))
                break
    return out


def exists(root, path):
    path = path.rstrip("/.,")
    if path in EXAMPLES:
        return True
    for alt in expand_braces(path):
        if any(c in alt for c in "*?[") and glob.glob(str(root / alt)):
            return True
        if (root / alt).exists() or glob.glob(glob.escape(str(root / alt)) + ".*"):
            return True  # a module named without its extension: .h and .cc
    return False


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [x for part in m.group(1).split(",")
            for x in expand_braces(path[:m.start()] + part + path[m.end():])]


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    problems = []
    docs = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    for page in docs:
        rel = page.relative_to(root)
        for no, line in enumerate(page.read_text().split("\n"), 1):
            for m in PATH.finditer(line.replace("$PWD/", "")):
                if not exists(root, m.group(1)):
                    problems.append(f"{rel}:{no}: {m.group(1)} does not exist")
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1)
                if "://" in target or target.startswith("mailto:"):
                    continue
                if not (page.parent / target).exists():
                    problems.append(f"{rel}:{no}: link {target} does not exist")
            for m in ISSUE.finditer(line):
                problems.append(f"{rel}:{no}: '{m.group(0)}' cites an issue tracker the repository does not hold")
    for path in sorted(root.rglob("*")):
        if not path.is_file() or SKIP_DIRS & set(path.relative_to(root).parts[:-1]):
            continue
        rel = path.relative_to(root)
        if rel.parts[0] == "docs":
            continue
        name = path.name
        if path.suffix in CXX:
            comments = comments_cxx(path.read_text(errors="replace"))
        elif path.suffix in HASH or name == "CMakeLists.txt" or name.startswith("run_") or \
                (path.suffix == "" and path.read_bytes()[:2] == b"#!"):
            comments = comments_hash(path.read_text(errors="replace"))
        else:
            continue
        for no, text in comments:
            for m in PATH.finditer(text):
                if not exists(root, m.group(1)):
                    problems.append(f"{rel}:{no}: {m.group(1)} does not exist")
            for m in ISSUE.finditer(text):
                problems.append(f"{rel}:{no}: '{m.group(0)}' cites an issue tracker the repository does not hold")
    for p in problems:
        print(p)
    if problems:
        print(f"check_paths: {len(problems)} stale paths or issue numbers", file=sys.stderr)
        return 1
    print(f"check_paths: {len(docs)} pages and the source comments name only paths that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
