# shellcheck shell=bash
# The shell library of the scripts, benchmarks and CLI tests: sourced, never run, and it sets no
# shell options (each script sets its own). Sourcing it sets
#   ADAQP_ROOT       the repository, found from this file (any working directory will do);
#   ADAQP_BUILD_DIR  the build directory: the environment's, else ADAQP_ROOT/build;
#   ADAQP_BIN        the adaqp binary: the environment's (ctest gives the CLI tests theirs), else
#                    ADAQP_BUILD_DIR/src/adaqp;
#   ADAQP_TAG        the tag of this script's messages: its name, or its folder's for a run.sh;
#   ADAQP_LOG_TIME   1: messages carry the time of day (0: they do not);
# and lets OpenMPI run as root (it refuses to otherwise; containers and CI run as root).
# Functions: log and die (messages), require_adaqp, bench_setup, sanitizer_setup, and the job
# presets, which print --set pairs one word a line, to be read into an array and followed by the
# caller's own --set pairs (where adaqp gets a key twice, the later value wins):
#   mapfile -t job < <(synthetic_graph 1500 seed=5; gnn_model 2 16; set_pairs training.threads=1)

ADAQP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ADAQP_BUILD_DIR=${ADAQP_BUILD_DIR:-$ADAQP_ROOT/build}
ADAQP_BIN=${ADAQP_BIN:-$ADAQP_BUILD_DIR/src/adaqp}
ADAQP_TAG=${0##*/}
ADAQP_TAG=${ADAQP_TAG%.sh}
[[ $ADAQP_TAG != run ]] || ADAQP_TAG=$(basename "$(cd "$(dirname "$0")" && pwd)")
ADAQP_LOG_TIME=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# log MESSAGE...: "[TAG HH:MM:SS] MESSAGE" ("[TAG] MESSAGE" with ADAQP_LOG_TIME=0) on stderr
# (stdout is for results).
log() {
  local tag=$ADAQP_TAG
  ((ADAQP_LOG_TIME == 0)) || tag+=" $(date +%H:%M:%S)"
  printf '[%s] %s\n' "$tag" "$*" >&2
}

# die MESSAGE...: logs "error: MESSAGE" and ends the script with status 2.
die() {
  log "error: $*"
  exit 2
}

# require_adaqp: ends the script, naming the path, when the adaqp binary is not there.
require_adaqp() {
  [[ -x $ADAQP_BIN ]] || die "no adaqp binary at $ADAQP_BIN (build it with scripts/setup.sh, or" \
    "set ADAQP_BUILD_DIR or ADAQP_BIN)"
}

# sanitizer_setup PRESET BUILD: for the sanitizer scripts: configures the CMake preset PRESET in
# BUILD with $ADAQP_PYTHON, else $ADAQP_VENV's Python where set (the output in BUILD/configure.log,
# printed on failure); points the tests at the sources, BUILD's adaqp and the shared datasets; and
# makes $tmp, a directory removed on exit.
sanitizer_setup() {
  local preset=$1 build=$2 python=${ADAQP_PYTHON:-${ADAQP_VENV:+$ADAQP_VENV/bin/python}}
  mkdir -p "$build"
  cmake -S "$ADAQP_ROOT" --preset "$preset" -B "$build" ${python:+"-DADAQP_PYTHON=$python"} \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
  export ADAQP_SOURCE_DIR="$ADAQP_ROOT" ADAQP_BIN="$build/src/adaqp"
  export ADAQP_SHARED_DATASETS=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}

# bench_setup: for the benchmarks that take THREADS and OUT: checks the binary, makes OUT (a
# temporary directory removed on exit unless OUT is given) and gives each worker THREADS OpenMP
# threads.
bench_setup() {
  require_adaqp
  if [[ -n ${OUT:-} ]]; then
    mkdir -p "$OUT"
  else
    OUT=$(mktemp -d)
    trap 'rm -rf "$OUT"' EXIT
  fi
  export OMP_NUM_THREADS=$THREADS
}

# work_dir_arg [ARG]: for a script whose one argument is its work directory: -h/--help prints the
# script's opening comment and ends it (status 0); another option is refused (status 2).
work_dir_arg() {
  case ${1:-} in
    -h | --help)
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      exit 0
      ;;
    -*) die "unknown option '$1' (see --help); the one argument is the work directory" ;;
  esac
}

# set_pairs KEY=VALUE...: "--set KEY=VALUE" for each argument.
set_pairs() {
  local kv
  for kv in "$@"; do printf -- '--set\n%s\n' "$kv"; done
}

# synthetic_graph NODES [KEY=VALUE...]: the generated graph of NODES nodes (dataset.format
# synthetic), each KEY=VALUE a key of dataset.synthetic (avg_degree, feat_dim, num_classes, seed,
# ...: docs/configuration.md); unset keys keep their defaults.
synthetic_graph() {
  set_pairs dataset.format=synthetic "dataset.synthetic.num_nodes=$1"
  shift
  set_pairs "${@/#/dataset.synthetic.}"
}

# gnn_model LAYERS HIDDEN [KEY=VALUE...]: the model's depth and width, each KEY=VALUE a key of model
# (type, dropout, heads, ...).
gnn_model() {
  set_pairs "model.layers=$1" "model.hidden=$2"
  shift 2
  set_pairs "${@/#/model.}"
}

# gcn_job_args NODES W: the benchmarks' GCN job (DEGREE, FEAT, LAYERS, HIDDEN, EPOCHS, THREADS and
# OUT from the caller) on the generated graph of NODES nodes, split in W parts and partitioned once
# per size and W, at full precision (a quantized mode takes communication.scheme from the caller).
gcn_job_args() {
  synthetic_graph "$1" "avg_degree=$DEGREE" "feat_dim=$FEAT" seed=1
  gnn_model "$LAYERS" "$HIDDEN" type=gcn dropout=0.5
  set_pairs dataset.self_loops=true "partition.parts=$2" "partition.dir=$OUT/partition-$1-w$2" \
    "training.epochs=$EPOCHS" "training.eval_every=$EPOCHS" "training.threads=$THREADS" \
    output.log_level=warn communication.mode=vanilla
}
