# Share of the CPU time of one `ctest --parallel 3` run by test, from process accounting (accton)
# and the execve trace of strace (which tests the processes belong to): see README.md here.
import collections, re, subprocess, sys

PACCT, EXECS = sys.argv[1], sys.argv[2]  # accton file, strace -f -e trace=execve -o file
out = subprocess.run(["dump-acct", PACCT], capture_output=True, text=True).stdout
procs = {}
for line in out.splitlines():
    f = [x.strip() for x in line.split("|")]
    comm, ut, st, pid, ppid = f[0], float(f[2]), float(f[3]), int(f[9]), int(f[10])
    procs[pid] = (comm, ppid, ut + st)
# test roots from strace: ctest's direct children exec the test command
roots = {}
for line in open(EXECS):
    m = re.match(r'(\d+)\s+execve\("([^"]+)", \[(.*?)\]', line)
    if not m or "= -1" in line: continue
    pid, path, args = int(m.group(1)), m.group(2), m.group(3)
    a = [x.strip('" ') for x in args.split(", ")]
    if path.endswith("/bash") and len(a) > 1 and "/tests/cli/" in a[1]:
        roots[pid] = "cli_" + a[1].rsplit("/", 1)[1][:-3]
    elif "--gtest_filter=" in args and ("adaqp_unit_tests" in args or "adaqp_nn_tests" in args) and path.endswith("cmake"):
        roots[pid] = "gtest:" + [x for x in a if x.startswith("--gtest_filter")][0][15:]
    elif path.endswith("mpiexec") or (path.endswith("mpirun") and "adaqp_mpi_tests" in args and pid not in roots):
        if "adaqp_mpi_tests" in args: roots.setdefault(pid, "mpi:" + " ".join(a[2:5]))
    elif "fuzz_replay_" in path:
        roots.setdefault(pid, "fuzz:" + path.rsplit("/",1)[1])
# Shares only: the trace inflates every process's time, and dump-acct's units are its own.
tot = collections.Counter(); cnt = collections.Counter()
def test_of(pid):
    seen = 0
    while pid in procs and seen < 100:
        if pid in roots: return roots[pid]
        pid = procs[pid][1]; seen += 1
    return roots.get(pid, "other")
for pid, (comm, ppid, cpu) in procs.items():
    t = test_of(pid)
    tot[t] += cpu
    if comm == "adaqp": cnt[t] += 1
s = sum(tot.values())
print("share of CPU time (user + system, every process of the run), test, adaqp processes")
for t, v in tot.most_common(40):
    print(f"{100*v/s:5.1f}%  {t:<45} {cnt[t]:4d}")
