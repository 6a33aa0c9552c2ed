#!/usr/bin/env python3
"""Prints the failure lines of every test of the last ctest run that failed (gtest's failed cases
and their messages, a CLI test's FAIL line, an adaqp error), from ctest's log
(Testing/Temporary/LastTest.log of the build directory given as the argument). Used by
scripts/test.sh as its last output, so that a log cut to its head and tail still names them: a
4-rank gtest binary prints thousands of lines before its failure."""
import re
import sys
from pathlib import Path

MAX_LINES = 30  # per failed test
STATUS = re.compile(r"\[ *(RUN|OK|FAILED|SKIPPED|-+|=+) *\]")  # gtest's own lines
log = Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
if not log.exists():
    sys.exit(0)
failed = []
for block in re.split(r"\n(?=\d+/\d+ Testing: )", log.read_text(errors="replace")):
    m = re.match(r"\d+/\d+ Testing: (\S+)", block)
    if not m or "Test Failed." not in block:
        continue
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in block.splitlines()]
    picked = []
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Failure"):  # gtest: the message follows, up to 3 lines
            picked.append(line)
            for after in lines[i + 1 : i + 4]:
                if STATUS.search(after):
                    break
                picked.append(after)
        elif "[  FAILED  ]" in line or line.startswith("FAIL") or "adaqp: error" in line:
            picked.append(line)
    kept = (line.strip()[:300] for line in picked if line.strip() and line != "<end of output>")
    unique = list(dict.fromkeys(kept))
    t = re.search(r"^Test time = *(\S+) sec", block, re.M)
    name = f"{m.group(1)} ({t.group(1)} s)" if t else m.group(1)
    failed.append((name, unique[:MAX_LINES] or ["(no failure line found: see the log above)"]))
if failed:
    print(f"{len(failed)} test(s) failed:")
    for name, lines in failed:
        print(f"  {name}:")
        for line in lines:
            print(f"    {line}")
