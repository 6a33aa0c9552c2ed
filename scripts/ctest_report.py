#!/usr/bin/env python3
"""Reads the last ctest run's log (Testing/Temporary/LastTest.log of the build directory given)
for scripts/test.sh.

  ctest_report.py skips BUILD_DIR      every test that skipped, with its reason: a skip is read,
                                       not only counted
  ctest_report.py failures BUILD_DIR   every failed test's failure lines (gtest's failed cases and
                                       their messages, a CLI test's FAIL line, an adaqp error):
                                       printed last, so that a log cut to its head and tail still
                                       names them (a 4-rank gtest binary prints thousands of lines
                                       before its failure)
"""
import re
import sys
from pathlib import Path

MAX_LINES = 30  # failure lines per failed test
STATUS = re.compile(r"\[ *(RUN|OK|FAILED|SKIPPED|-+|=+) *\]")  # gtest's own lines


def blocks(build_dir):
    """(test name, its part of the log) for every test of the last run."""
    log = Path(build_dir) / "Testing" / "Temporary" / "LastTest.log"
    if not log.exists():
        return
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", log.read_text(errors="replace")):
        m = re.match(r"\d+/\d+ Testing: (\S+)", block)
        if m:
            yield m.group(1), block


def skips(build_dir):
    found = []
    for name, block in blocks(build_dir):
        lines = block.splitlines()
        reasons = []
        for i, line in enumerate(lines):
            if line.startswith("SKIP: "):  # tests/cli/lib/skip.sh and the gpu_*.sh scripts
                reasons.append(line[len("SKIP: "):])
            elif line.endswith(": Skipped") and i + 1 < len(lines):  # GTEST_SKIP's message follows
                reasons.append(lines[i + 1].strip())
        skipped = "Skip regular expression found" in block or any(
            line.startswith("SKIP: ") for line in lines)
        if skipped:
            found.append((name, sorted(set(reasons)) or ["(no reason printed)"]))
    if found:
        print(f"{len(found)} test(s) skipped:")
        for name, reasons in found:
            print(f"  {name}: {'; '.join(reasons)[:300]}")


def failures(build_dir):
    found = []
    for name, block in blocks(build_dir):
        if "Test Failed." not in block:
            continue
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in block.splitlines()]
        picked = []
        for i, line in enumerate(lines):
            if line.rstrip().endswith(": Failure"):  # gtest: the message follows, up to 3 lines
                picked.append(line)
                for after in lines[i + 1:i + 4]:
                    if STATUS.search(after):
                        break
                    picked.append(after)
            elif "[  FAILED  ]" in line or line.startswith("FAIL") or "adaqp: error" in line:
                picked.append(line)
        kept = (line.strip()[:300] for line in picked if line.strip() and line != "<end of output>")
        unique = list(dict.fromkeys(kept))
        t = re.search(r"^Test time = *(\S+) sec", block, re.M)
        label = f"{name} ({t.group(1)} s)" if t else name
        found.append((label, unique[:MAX_LINES] or ["(no failure line found: see the log above)"]))
    if found:
        print(f"{len(found)} test(s) failed:")
        for label, lines in found:
            print(f"  {label}:")
            for line in lines:
                print(f"    {line}")


if __name__ == "__main__":
    reports = {"skips": skips, "failures": failures}
    if len(sys.argv) != 3 or sys.argv[1] not in reports:
        sys.exit(f"usage: {sys.argv[0]} skips|failures BUILD_DIR")
    reports[sys.argv[1]](sys.argv[2])
