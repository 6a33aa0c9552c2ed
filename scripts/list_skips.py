#!/usr/bin/env python3
"""Prints every test of the last ctest run that skipped, with its reason, from ctest's log
(Testing/Temporary/LastTest.log of the build directory given as the argument). Used by
scripts/test.sh, so that a skip is read, not only counted."""
import re
import sys
from pathlib import Path

log = Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
if not log.exists():
    sys.exit(0)
skips = []
for block in re.split(r"\n(?=\d+/\d+ Testing: )", log.read_text(errors="replace")):
    m = re.match(r"\d+/\d+ Testing: (\S+)", block)
    if not m:
        continue
    lines = block.splitlines()
    reasons = []
    for i, line in enumerate(lines):
        if line.startswith("SKIP: "):  # tests/cli/lib/skip.sh and the gpu_*.sh scripts
            reasons.append(line[len("SKIP: "):])
        elif line.endswith(": Skipped") and i + 1 < len(lines):  # GTEST_SKIP's message follows
            reasons.append(lines[i + 1].strip())
    skipped = "Skip regular expression found" in block or any(line.startswith("SKIP: ") for line in lines)
    if skipped:
        skips.append((m.group(1), sorted(set(reasons)) or ["(no reason printed)"]))
if skips:
    print(f"{len(skips)} test(s) skipped:")
    for name, reasons in skips:
        print(f"  {name}: {'; '.join(reasons)[:300]}")
