#!/usr/bin/python3
"""README's two set-up commands stay what they promise (README.md, .ci/run).

Command 1 (the first ```sh block) installs only what running lull needs and
builds only lull; command 2 (the second) installs the test packages too, and
.ci/run runs exactly it. Usage: readme_commands_check.py SOURCE_DIR
"""
import re
import sys

root = sys.argv[1]
blocks = re.findall(r"^```sh\n(.*?)^```", open(f"{root}/README.md").read(), re.M | re.S)
errors = []
if len(blocks) < 2:
    sys.exit("README.md: fewer than two ```sh blocks (command 1 and command 2)")
first, second = blocks[0].strip(), blocks[1].strip()
if not first.startswith(".ci/install-deps &&"):
    errors.append("command 1 does not start with '.ci/install-deps &&' (the run packages only)")
if "--target lull" not in first or "ctest" in first or "-DLULL_BUILD_TESTS=OFF" not in first:
    errors.append("command 1 does not configure without tests and build only '--target lull'")
if not second.startswith(".ci/install-deps --tests &&") or "ctest" not in second or \
        "-DLULL_BUILD_TESTS=ON" not in second:  # ON: command 1 left OFF in the build folder's cache
    errors.append("command 2 does not install the test packages and run ctest")
ci = [line.strip() for line in open(f"{root}/.ci/run") if line.startswith(".ci/install-deps")]
if ci != [second]:
    errors.append(f".ci/run's set-up line {ci} is not README command 2 {second!r}")
for e in errors:
    print(f"README.md: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
