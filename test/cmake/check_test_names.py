#!/usr/bin/env python3
"""Every Catch2 test case name can be one ctest test.

catch_discover_tests passes names through CMake lists, so a name holding a
';' becomes two tests that match no case and fail without running anything.
Reads every TEST_CASE under test/ (adjacent string literals joined) and names
each offending file and line. Usage: check_test_names.py SOURCE_DIR
"""
import pathlib
import re
import sys

CASE = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    bad = []
    for path in sorted((root / "test").rglob("*.cc")):
        text = path.read_text()
        for m in CASE.finditer(text):
            name = "".join(LITERAL.findall(m.group(1)))
            if ";" in name:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{path.relative_to(root)}:{line}: test case name holds ';' (ctest splits it): {name}")
    for b in bad:
        print(b)
    if not bad:
        print("check_test_names: every test case name is one ctest name")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
