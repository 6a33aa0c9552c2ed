#!/usr/bin/env bash
# scripts/slurm/train.sbatch under a real Slurm: a private cluster of 2 nodes (munged, slurmctld and
# slurmd of the Debian packages, on their own socket, network and directories, found by the
# commands through SLURM_CONF), then three batch jobs of the script on one node, each waited for:
#   1. a job whose configuration asks for 3 parts, on 2 tasks of 1 CPU: the script's
#      partition.parts (the task count) wins, 2 workers train, each bound to a CPU of its own;
#      then requeued (`scontrol requeue`) with 2 more epochs in its configuration: it resumes from
#      its last checkpoint (the script adds --resume=auto to a restarted job);
#   2. --resume --repartition on 1 task with every CPU (--cpus-per-task): the worker gets all of
#      them (srun of Slurm 22.05 does not take --cpus-per-task from the allocation unless the
#      script passes it on), resumes from the first job's last checkpoint and repartitions into 1;
#   3. an unknown configuration key: the job ends FAILED, and its output names the key.
# Then what docs/cluster.md offers beside the script: `mpirun` inside a 2-task allocation trains on
# 2 workers; srun without an MPI plugin (--mpi=none) is one error, printed once, naming the remedy,
# and exit status 1, for train, while generate and info run once, on the first task. And the script
# outside a Slurm job says so and exits non-zero.
# Then a job on both nodes (2 tasks each): every worker starts through PMIx across the nodes, and
# adaqp finds 2 hosts (its link model has a class for each); and a worker killed on the second node
# ends its job at once (the script's --kill-on-bad-exit) instead of at adaqp's wait bound.
# The cluster: 2 nodes, each a network and UTS namespace of its own (slurmd -N n1 / n2, hostnames
# n1 / n2, on a bridge with slurmctld), per node spool and TmpFS (PMIx's directories), so that the
# nodes share nothing but the file system, as nodes on a shared file system would.
# The test runs in PID, mount and network namespaces of its own, so that the daemons, the job steps
# slurmd starts, the bridge and the node namespaces end with it even when it is killed (SIGKILL at
# ctest's timeout); every wait has one deadline, well inside that timeout, and jobs have a time
# limit. Needs root (the daemons, the namespaces), 2 CPUs and the packages of scripts/setup.sh; a
# visible skip otherwise (a failure when CI=true).
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/skip.sh"
((EUID == 0)) || skip_or_fail "a private Slurm cluster needs root"
for cmd in munged slurmctld slurmd sbatch srun scontrol sinfo squeue scancel unshare nsenter ip; do
  command -v "$cmd" >/dev/null || skip_or_fail "$cmd is not installed (scripts/setup.sh installs slurm-wlm and munge)"
done
# Everything below is the namespaces' first process: when it ends, the kernel kills the rest.
if [[ ${ADAQP_SLURM_TEST_PID_NS:-} != 1 ]]; then
  ADAQP_SLURM_TEST_PID_NS=1 exec unshare --pid --fork --kill-child --mount-proc --net bash "$0" "$@"
fi
# The machine's CPUs, as this process may use them (nproc alone would count OMP_NUM_THREADS, 1 in
# the tests' environment).
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
allowed=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
((cpus >= 2)) || skip_or_fail "2 CPUs needed, $cpus here"
# Variables of an enclosing Slurm job would steer this cluster's commands.
while read -r var; do unset "$var"; done < <(compgen -e | grep '^SLURM_' || true)

deadline=$((SECONDS + 240))
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
stop() {
  if [[ -n ${ctld:-} ]] && kill -0 "$ctld" 2>/dev/null; then
    scancel --quiet --user=root 2>/dev/null || true
    for _ in $(seq 50); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.2; done
  fi
  # The nodes first, then the controller, then MUNGE, which both need to say goodbye.
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 143' TERM INT HUP
fail() {
  echo "FAIL: $*" >&2
  for f in "$tmp"/*.log "$tmp"/job-*.out; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }; done
  exit 1
}
in_time() { ((SECONDS < deadline)) || fail "past the test's deadline: $1"; }

# daemon NAME COMMAND...: runs COMMAND in the foreground, in the background of this script.
daemon() {
  local name=$1
  shift
  "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
}

# The network: slurmctld on a bridge (10.77.0.1, this namespace), node i in namespace n<i> at
# 10.77.0.(i+1). ip netns keeps its namespaces under /run/netns: a tmpfs of this mount namespace.
ip link set lo up
mkdir -p /run/netns
mount -t tmpfs -o size=1m,mode=755 adaqp-slurm-netns /run/netns
ip link add br0 type bridge
ip addr add 10.77.0.1/24 dev br0
ip link set br0 up
nodes=(n1 n2)
for i in 1 2; do
  ip netns add "n$i"
  ip link add "v$i" type veth peer name eth0 netns "n$i"
  ip link set "v$i" master br0 up
  ip -n "n$i" addr add "10.77.0.$((i + 1))/24" dev eth0
  ip -n "n$i" link set eth0 up
  ip -n "n$i" link set lo up
done

mkdir -p "$tmp/state" "$tmp/spool/n1" "$tmp/spool/n2" "$tmp/nodetmp/n1" "$tmp/nodetmp/n2"
head -c 1024 /dev/urandom >"$tmp/munge.key"
chmod 400 "$tmp/munge.key"
daemon munged munged --foreground --force --socket="$tmp/munge.socket" \
  --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" --log-file="$tmp/munged-own.log" \
  --seed-file="$tmp/munged.seed"
until [[ -S $tmp/munge.socket ]]; do
  kill -0 "${pids[0]}" 2>/dev/null || fail "munged ended"
  in_time "munged's socket"
  sleep 0.1
done
# Each node as slurmd sees the hardware (sockets, cores, threads): both nodes share this machine's.
hardware=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
cat >"$tmp/slurm.conf" <<EOF
ClusterName=adaqptest
SlurmctldHost=$(hostname -s)(10.77.0.1)
AuthType=auth/munge
# cred_expire: how long a requeued job must wait before it starts again (120 s by default).
AuthInfo=socket=$tmp/munge.socket,cred_expire=5
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
TmpFS=$tmp/nodetmp/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd-%n.pid
SlurmctldLogFile=$tmp/slurmctld-own.log
SlurmdLogFile=$tmp/slurmd-%n-own.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=n1 NodeAddr=10.77.0.2 $hardware State=UNKNOWN
NodeName=n2 NodeAddr=10.77.0.3 $hardware State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=5 State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
daemon slurmctld slurmctld -D
ctld=${pids[-1]}
for node in "${nodes[@]}"; do
  # shellcheck disable=SC2016  # $1: the inner shell's argument
  daemon "slurmd-$node" nsenter --net="/run/netns/$node" unshare --uts \
    sh -c 'hostname "$1" && exec slurmd -D -N "$1"' slurmd "$node"
done
until [[ $(sinfo -h -o %T 2>/dev/null | sort -u) == idle ]]; do
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon ended"; done
  in_time "the nodes coming up: $(sinfo 2>&1)"
  sleep 0.2
done
echo "ok: a private Slurm $(sinfo -V | cut -d' ' -f2) cluster of 2 nodes in namespaces ($hardware each)"

export ADAQP_BIN
cd "$ADAQP_SOURCE_DIR"
run="$tmp/run"
# wait_job NAME ID: waits for job ID (polling: `sbatch --wait` looks only every few seconds) and
# prints its state.
wait_job() {
  local name=$1 id=$2 state
  while :; do
    state=$(scontrol show job "$id" | grep -o 'JobState=[A-Z_]*')
    [[ $state =~ PENDING|CONFIGURING|RUNNING|COMPLETING|REQUEUE ]] || break
    in_time "job $name ($state, $(scontrol show job "$id" | grep -o 'Reason=[^ ]*'))"
    sleep 0.2
  done
  echo "job $name ($id): $state" >&2
  echo "$state"
}
# job NAME SBATCH_ARGS... -- TRAIN_ARGS...: submits scripts/slurm/train.sbatch with a 2-minute
# limit, waits for it and prints its state. Its output is $tmp/job-NAME.out, its id in
# $tmp/id-NAME.
job() {
  local name=$1 sbatch_args=() id
  shift
  while [[ $1 != -- ]]; do sbatch_args+=("$1"); shift; done
  shift
  id=$(sbatch --parsable --time=2 --output="$tmp/job-$name.out" "${sbatch_args[@]}" \
    scripts/slurm/train.sbatch --set "output.dir=$run" --set training.checkpoint_every=2 \
    --set training.threads=0 --set output.log_level=info "$@") || fail "sbatch refused job $name"
  echo "$id" >"$tmp/id-$name"
  wait_job "$name" "$id"
}
parts() { sed -n 's/^parts: *//p' "$run/partition/meta.yaml"; }
threads() { grep -o '[0-9]* compute thread(s) on CPUs [0-9,-]*' "$tmp/job-$1.out" | sort; }

printf 'partition:\n  parts: 3\ntraining:\n  epochs: 4\n' >"$tmp/three.yaml"
[[ $(job two -N 1 -n 2 --cpus-per-task=1 -- --config "$tmp/three.yaml") == *COMPLETED ]] ||
  fail "the 2-task job did not complete"
[[ $(parts) == 2 ]] || fail "the 2-task job's partition has $(parts) parts"
mapfile -t two < <(threads two)
if ! { ((${#two[@]} == 2)) && [[ ${two[0]} == "1 compute thread(s) on CPUs "* ]] &&
  [[ ${two[1]} == "1 compute thread(s) on CPUs "* ]] && [[ ${two[0]} != "${two[1]}" ]]; }; then
  fail "2 workers on a CPU each: ${two[*]}"
fi
echo "ok: 2 tasks of a job asking for 3 parts: 2 parts, ${two[*]}"

# Requeued with the same arguments (its configuration now asks for 6 epochs): the script adds
# --resume=auto, and the job continues from its checkpoint of epoch 4.
printf 'partition:\n  parts: 3\ntraining:\n  epochs: 6\n' >"$tmp/three.yaml"
id=$(<"$tmp/id-two")
scontrol requeue "$id" || fail "scontrol requeue $id"
# Slurm holds it past cred_expire, then waits for its next scheduling pass; started sooner, the job
# raced with the revocation of its first run's credential ("Killing non-startable batch JobId=1:
# Job credential revoked", once in a few runs). Started once cred_expire has passed:
sleep 6
scontrol update jobid="$id" starttime=now || fail "scontrol update jobid=$id starttime=now"
[[ $(wait_job two-requeued "$id") == *COMPLETED ]] || fail "the requeued job did not complete"
grep -q "restart 1 of job $id: adding --resume=auto" "$tmp/job-two.out" ||
  fail "the requeued job did not add --resume=auto"
grep -q "resuming from .*ckpt-0*4.bin (epoch 4)" "$tmp/job-two.out" ||
  fail "the requeued job did not resume from epoch 4"
echo "ok: requeued, the job resumed from epoch 4 (--resume=auto)"

[[ $(job one -N 1 -n 1 --cpus-per-task="$cpus" -- --set training.epochs=8 --resume --repartition) == *COMPLETED ]] ||
  fail "the resumed 1-task job did not complete"
[[ $(parts) == 1 ]] || fail "the resumed job's partition has $(parts) parts"
[[ $(threads one) == "$cpus compute thread(s) on CPUs $allowed" ]] ||
  fail "1 worker on all $cpus CPUs ($allowed): $(threads one)"
grep -q "resuming from .*ckpt-0*6.bin (epoch 6)" "$tmp/job-one.out" || fail "no resume from epoch 6"
python3 - "$run/metrics.jsonl" <<'PY' || fail "metrics of the resumed run"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
summary = [r for r in records if r.get("event") == "summary"]
keys = [(r["epoch"], r["rank"]) for r in records if "epoch" in r and "event" not in r]
epochs = sorted({e for e, _ in keys})
# The resume drops the first job's summary and any epoch past its checkpoint: one record each.
assert len(summary) == 1 and summary[0]["epochs"] == 8, summary
assert len(keys) == len(set(keys)), sorted(keys)
assert epochs == list(range(1, 9)), epochs
PY
echo "ok: resumed at epoch 6 on 1 task: 1 part, $(threads one), epochs 1-8 in metrics.jsonl"

[[ $(job bad -n 1 -- --set training.epochz=3) == *JobState=FAILED ]] || fail "the job with an unknown key did not fail"
grep -q "unknown key 'training.epochz'" "$tmp/job-bad.out" || fail "the failed job does not name the key"
echo "ok: an unknown key fails the job: $(grep -m1 -o "unknown key '[a-z._]*'" "$tmp/job-bad.out")"

# shellcheck disable=SC2016  # $SLURM_NTASKS: the job's shell expands it
id=$(sbatch --parsable --time=2 -N 1 -n 2 --cpus-per-task=1 --output="$tmp/job-mpirun.out" --wrap \
  "mpirun $ADAQP_BIN train"' --set partition.parts=$SLURM_NTASKS --set training.epochs=2'" \
   --set output.dir=$tmp/mpirun --set output.log_level=info") || fail "sbatch refused the mpirun job"
[[ $(wait_job mpirun "$id") == *COMPLETED ]] || fail "mpirun inside an allocation did not complete"
grep -q "2 epochs on 2 worker(s)" "$tmp/job-mpirun.out" || fail "mpirun inside an allocation"
echo "ok: mpirun inside a 2-task allocation trains on 2 workers"

rc=0
out=$(timeout 120 srun --time=2 --mpi=none -N 1 -n 2 "$ADAQP_BIN" train --set "output.dir=$tmp/none" 2>&1) || rc=$?
if ((rc != 1)) || [[ $(grep -c "adaqp: error: srun started 2 task(s) without an MPI plugin" <<<"$out") != 1 ]] ||
  [[ $out != *"srun --mpi=pmix"* ]]; then
  fail "srun --mpi=none: exit status $rc: $out"
fi
echo "ok: srun --mpi=none: exit status 1, one error naming srun --mpi=pmix"

# generate and info are one process's work: under srun without an MPI plugin the first task does
# it alone (once: one graph written, one report) and every task ends with status 0.
rc=0
out=$(timeout 120 srun --time=2 --mpi=none -N 1 -n 2 "$ADAQP_BIN" generate --out "$tmp/gen" \
  --set dataset.synthetic.num_nodes=500 2>&1) || rc=$?
if ((rc != 0)) || [[ $(grep -c "^wrote $tmp/gen (NumPy layout)" <<<"$out") != 1 ]] ||
  [[ ! -s $tmp/gen/feat.npy ]]; then
  fail "srun --mpi=none generate: exit status $rc: $out"
fi
rc=0
out=$(timeout 120 srun --time=2 --mpi=none -N 1 -n 2 "$ADAQP_BIN" info --dataset "$tmp/gen" 2>&1) ||
  rc=$?
if ((rc != 0)) || [[ $(grep -c "^nodes  *500$" <<<"$out") != 1 ]]; then
  fail "srun --mpi=none info: exit status $rc: $out"
fi
echo "ok: srun --mpi=none: generate writes one graph and info reports once, exit status 0"

# Both nodes, 2 tasks each: srun starts the 4 workers across the nodes over PMIx, and adaqp's link
# model finds 2 hosts of 2 workers (a class for the same host, one for the other).
[[ $(job nodes -N 2 --ntasks-per-node=2 --cpus-per-task=1 -- --set "output.dir=$tmp/nodes" \
  --set training.epochs=3 --set communication.mode=adaqp) == *COMPLETED ]] ||
  fail "the job on 2 nodes did not complete"
[[ $(scontrol show job "$(<"$tmp/id-nodes")" | grep -o ' NodeList=[^ ]*') == " NodeList=n[1-2]" ]] ||
  fail "the job did not run on both nodes: $(scontrol show job "$(<"$tmp/id-nodes")" | grep NodeList)"
grep -q "3 epochs on 4 worker(s)" "$tmp/job-nodes.out" || fail "4 workers on 2 nodes"
grep -q "link model (per sender, same host and other hosts" "$tmp/job-nodes.out" ||
  fail "adaqp did not find 2 hosts"
echo "ok: 2 nodes x 2 tasks: 4 workers, link classes of the same host and other hosts"

# A worker killed on n2 while training: srun (--kill-on-bad-exit) ends the other at once; adaqp's own
# bound on a wait (communication.timeout_s, 200 s here) would end it only past the job's limit.
id=$(sbatch --parsable --time=2 -N 2 --ntasks-per-node=1 --cpus-per-task=1 \
  --output="$tmp/job-kill.out" scripts/slurm/train.sbatch --set "output.dir=$tmp/kill" \
  --set training.epochs=100000 --set communication.timeout_s=200 --set output.log_level=info) ||
  fail "sbatch refused the job to kill"
until grep -q "epoch *[0-9]*/100000" "$tmp/job-kill.out" 2>/dev/null; do
  in_time "the job to kill to train"
  sleep 0.2
done
victim=""
for pid in $(pgrep -f "$ADAQP_BIN train"); do
  grep -qz '^SLURMD_NODENAME=n2$' "/proc/$pid/environ" 2>/dev/null && victim=$pid
done
[[ -n $victim ]] || fail "no worker of the job found on n2"
kill -KILL "$victim"
killed=$SECONDS
while scontrol show job "$id" | grep -qE 'JobState=(RUNNING|COMPLETING)'; do
  ((SECONDS - killed <= 30)) || fail "the job still runs 30 s after a worker was killed"
  sleep 0.2
done
state=$(scontrol show job "$id" | grep -o 'JobState=[A-Z_]*')
[[ $state == JobState=FAILED ]] || fail "the job with a killed worker ended $state"
! pgrep -f "$ADAQP_BIN train" >/dev/null || fail "workers left after the job ended: $(pgrep -af "$ADAQP_BIN train")"
echo "ok: a worker killed on n2 ended its job ($state) in $((SECONDS - killed)) s, no worker left"

rc=0
out=$(bash scripts/slurm/train.sbatch 2>&1) || rc=$?
if ((rc == 0)) || [[ $out != *"not in a Slurm job"* ]]; then
  fail "outside a Slurm job: exit status $rc: $out"
fi
echo "ok: outside a Slurm job: ${out##*: }"
echo "slurm_batch: all passed"
