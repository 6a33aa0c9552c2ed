#!/usr/bin/env bash
# scripts/slurm/train.sbatch under a real Slurm: a private single-node cluster (munged, slurmctld
# and slurmd of the Debian packages, on their own socket, ports and directories, found by the
# commands through SLURM_CONF), then three batch jobs, each waited for with `sbatch --wait`:
#   1. the generated job on 2 tasks of 1 core, checkpointing: it trains on 2 workers, each bound to
#      a core of its own, and the partition it writes has 2 parts (partition.parts from the task
#      count, not from the configuration's default);
#   2. --resume --repartition on 1 task with every core (--cpus-per-task): the worker gets all of
#      them (srun of Slurm 22.05 does not take --cpus-per-task from the allocation unless the
#      script passes it on), resumes from the first job's last checkpoint and repartitions into 1;
#   3. an unknown configuration key: the job fails, and its output names the key.
# Then what docs/cluster.md offers beside the script: `mpirun` inside an allocation (OpenMPI starts
# its daemons through Slurm) trains on the allocation's 2 tasks; and srun without an MPI plugin
# (--mpi=none) is one error, printed once, naming the remedy, and a non-zero exit. And the script
# outside a Slurm job says so and exits non-zero. Needs root (the daemons) and the
# packages of scripts/setup.sh; a visible skip otherwise (a failure when CI=true).
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/skip.sh"
((EUID == 0)) || skip_or_fail "a private Slurm cluster needs root" root
for cmd in munged slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$cmd" >/dev/null || skip_or_fail "$cmd is not installed (scripts/setup.sh installs slurm-wlm and munge)"
done
tmp=$(mktemp -d)
chmod 755 "$tmp"
stop() {
  local pid
  for f in slurmd slurmctld munged; do
    if [[ -f $tmp/$f.pid ]]; then
      pid=$(<"$tmp/$f.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  done
  rm -rf "$tmp"
}
trap stop EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$tmp"/*.log "$tmp"/job-*.out; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }; done
  exit 1
}

# A port no process listens on, from a range the system's ephemeral ports avoid.
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 10000))
    if ! ss -Htln "sport = :$port" | grep -q .; then
      echo "$port"
      return
    fi
  done
  fail "no free port found"
}

node=$(hostname -s)
# The machine's cores: nproc alone would count OMP_NUM_THREADS (1 in the tests' environment).
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
mkdir -p "$tmp/state" "$tmp/spool"
head -c 1024 /dev/urandom >"$tmp/munge.key"
chmod 400 "$tmp/munge.key"
munged --force --socket="$tmp/munge.socket" --key-file="$tmp/munge.key" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" ||
  fail "munged did not start"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=adaqptest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld || fail "slurmctld did not start"
slurmd || fail "slurmd did not start"
for _ in $(seq 100); do
  [[ $(sinfo -h -o %T 2>/dev/null) == idle ]] && break
  sleep 0.2
done
[[ $(sinfo -h -o %T 2>/dev/null) == idle ]] || fail "the node did not come up: $(sinfo 2>&1)"
echo "ok: a private Slurm $(sinfo -V | cut -d' ' -f2) cluster of one node ($cpus CPUs)"

export ADAQP_BIN
cd "$ADAQP_SOURCE_DIR"
run="$tmp/run"
# wait_job NAME ID: waits for job ID (polling: `sbatch --wait` looks every few seconds); succeeds
# when it ends COMPLETED.
wait_job() {
  local name=$1 id=$2 state
  for _ in $(seq 1500); do
    state=$(scontrol show job "$id" | grep -o 'JobState=[A-Z_]*')
    [[ $state =~ PENDING|CONFIGURING|RUNNING|COMPLETING ]] || break
    sleep 0.2
  done
  echo "job $name ($id): $state"
  [[ $state =~ PENDING|CONFIGURING|RUNNING|COMPLETING ]] &&
    fail "job $name did not end in 300 s: $(scontrol show job "$id" | grep -o 'Reason=[^ ]*')"
  [[ $state == JobState=COMPLETED ]]
}

# job NAME SBATCH_ARGS... -- TRAIN_ARGS...: submits scripts/slurm/train.sbatch and waits for it.
# Its output is $tmp/job-NAME.out.
job() {
  local name=$1 sbatch_args=() id
  shift
  while [[ $1 != -- ]]; do sbatch_args+=("$1"); shift; done
  shift
  id=$(sbatch --parsable --output="$tmp/job-$name.out" "${sbatch_args[@]}" \
    scripts/slurm/train.sbatch --set "output.dir=$run" --set training.checkpoint_every=2 \
    --set training.threads=0 --set output.log_level=info "$@") || fail "sbatch refused job $name"
  wait_job "$name" "$id"
}
parts() { sed -n 's/^parts: *//p' "$run/partition/meta.yaml"; }
threads() { grep -o '[0-9]* compute thread(s) on CPUs [0-9,-]*' "$tmp/job-$1.out" | sort; }

job two -n 2 --cpus-per-task=1 -- --set training.epochs=4 || fail "the 2-task job failed"
[[ $(parts) == 2 ]] || fail "the 2-task job's partition has $(parts) parts"
mapfile -t two < <(threads two)
if ! { ((${#two[@]} == 2)) && [[ ${two[0]} == "1 compute thread(s) on CPUs "* ]] &&
  [[ ${two[1]} == "1 compute thread(s) on CPUs "* ]] && [[ ${two[0]} != "${two[1]}" ]]; }; then
  fail "2 workers on a core each: ${two[*]}"
fi
echo "ok: 2 tasks: 2 parts, ${two[*]}"

job one -n 1 --cpus-per-task="$cpus" -- --set training.epochs=6 --resume --repartition ||
  fail "the resumed 1-task job failed"
[[ $(parts) == 1 ]] || fail "the resumed job's partition has $(parts) parts"
[[ $(threads one) == "$cpus compute thread(s) on CPUs 0-$((cpus - 1))" ]] ||
  fail "1 worker on all $cpus cores: $(threads one)"
grep -q "resuming from .*ckpt-0*4.bin (epoch 4)" "$tmp/job-one.out" || fail "no resume from epoch 4"
python3 - "$run/metrics.jsonl" <<'PY' || fail "metrics of the resumed run"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
summary = [r for r in records if r.get("event") == "summary"]
epochs = sorted({r["epoch"] for r in records if "epoch" in r and "event" not in r})
assert summary and summary[-1]["epochs"] == 6, summary
assert epochs == list(range(1, 7)), epochs
PY
echo "ok: resumed at epoch 4 on 1 task: 1 part, $(threads one), epochs 1-6 in metrics.jsonl"

if job bad -n 1 -- --set training.epochz=3; then fail "a job with an unknown key succeeded"; fi
grep -q "unknown key 'training.epochz'" "$tmp/job-bad.out" || fail "the failed job does not name the key"
echo "ok: an unknown key fails the job: $(grep -m1 -o "unknown key '[a-z._]*'" "$tmp/job-bad.out")"

# shellcheck disable=SC2016  # $SLURM_NTASKS: the job's shell expands it
id=$(sbatch --parsable -n 2 --cpus-per-task=1 --output="$tmp/job-mpirun.out" --wrap \
  "mpirun $ADAQP_BIN train"' --set partition.parts=$SLURM_NTASKS --set training.epochs=2'" \
   --set output.dir=$tmp/mpirun --set output.log_level=info") || fail "sbatch refused the mpirun job"
wait_job mpirun "$id" || fail "mpirun inside an allocation"
grep -q "2 epochs on 2 worker(s)" "$tmp/job-mpirun.out" || fail "mpirun inside an allocation"
echo "ok: mpirun inside a 2-task allocation trains on 2 workers"

if out=$(timeout 120 srun --mpi=none -n 2 "$ADAQP_BIN" train --set "output.dir=$tmp/none" 2>&1); then
  fail "srun --mpi=none succeeded"
fi
if [[ $(grep -c "adaqp: error: srun started 2 task(s) without an MPI plugin" <<<"$out") != 1 ]] ||
  [[ $out != *"srun --mpi=pmix"* ]]; then
  fail "srun --mpi=none: $out"
fi
echo "ok: srun --mpi=none: one error, naming srun --mpi=pmix"

if out=$(env -u SLURM_NTASKS bash scripts/slurm/train.sbatch 2>&1); then
  fail "the script ran outside a Slurm job"
fi
[[ $out == *"not in a Slurm job"* ]] || fail "outside a Slurm job: $out"
echo "ok: outside a Slurm job: ${out##*: }"
echo "slurm_batch: all passed"
