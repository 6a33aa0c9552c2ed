#!/usr/bin/env python3
# usage: mut.py ID FILE OLD NEW [FILTER]
import sys, subprocess, time, pathlib
mid, f, old, new = sys.argv[1:5]
flt = sys.argv[5] if len(sys.argv) > 5 else "*"
root = pathlib.Path("/tmp/mut-b")
p = root / f
src = p.read_text()
n = src.count(old)
if n != 1:
    print(f"{mid}: pattern count {n}, abort"); sys.exit(2)
p.write_text(src.replace(old, new))
try:
    t = time.time()
    b = subprocess.run(["ninja", "-C", "build", "-j1", "adaqp_unit_tests"], cwd=root, capture_output=True, text=True)
    if b.returncode != 0:
        print(f"{mid}: BUILD FAILED\n" + b.stdout[-3000:]); sys.exit(3)
    bt = time.time() - t
    r = subprocess.run(["build/tests/adaqp_unit_tests", "--gtest_brief=1", f"--gtest_filter={flt}"], cwd=root, capture_output=True, text=True, timeout=1200)
    failed = sorted(set(l[13:].split(" ")[0] for l in r.stdout.splitlines() if l.startswith("[  FAILED  ] ") and "." in l[13:].split(" ")[0]))
    status = "KILLED" if r.returncode != 0 else "SURVIVED"
    print(f"{mid}: {status} rc={r.returncode} build={bt:.0f}s failed={failed}")
    if r.returncode != 0 and not failed:
        print(r.stdout[-1500:], r.stderr[-1500:])
finally:
    subprocess.run(["git", "-C", str(root), "checkout", "--", f])
