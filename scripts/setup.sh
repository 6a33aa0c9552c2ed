#!/usr/bin/env bash
# Installs every dependency non-interactively and idempotently, then configures and builds.
#   Debian packages: compilers, CMake, METIS, PT-Scotch, OpenMPI, spdlog, fmt, CLI11, yaml-cpp, GoogleTest,
#   zlib, libzip (GraphSAINT .npz archives), nlohmann-json, GLPK and CBC (exact solver referee),
#   gnuplot, iproute2, clang-format, GNU time (peak memory of benchmark and test runs), clang with
#   its sanitizer, libFuzzer and OpenMP runtimes (scripts/sanitize.sh, scripts/fuzz.sh), Slurm and
#   MUNGE (tests/cli/slurm_batch.sh runs scripts/slurm/train.sbatch on a private Slurm).
#   PyTorch 2.11.0 from PyPI into a virtual environment ($ADAQP_VENV, default .venv): its bundled
#   libtorch is what the C++ code links against, and the same version the GPU machines run.
# Environment: ADAQP_BUILD_DIR (default build), ADAQP_VENV (default .venv), ADAQP_BUILD_TYPE
# (default Release), ADAQP_CMAKE_ARGS (extra CMake arguments), ADAQP_SKIP_BUILD=1 (install only).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
VENV=${ADAQP_VENV:-$ADAQP_ROOT/.venv}
TORCH_VERSION=2.11.0

APT_PACKAGES=(build-essential cmake ninja-build pkg-config python3 python3-venv python3-pip
  libmetis-dev libptscotch-dev libopenmpi-dev openmpi-bin libspdlog-dev libfmt-dev libcli11-dev libyaml-cpp-dev
  libgtest-dev zlib1g-dev libzip-dev nlohmann-json3-dev glpk-utils libglpk-dev coinor-cbc gnuplot-nox iproute2 clang-format
  time clang libclang-rt-dev libomp-dev slurm-wlm munge)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "Debian packages: all present"
fi

torch_installed() {
  [ -x "$VENV/bin/python" ] &&
    "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('torch').split('+')[0] != '$TORCH_VERSION')" 2>/dev/null
}
# Installs the wheels pip resolves for torch and numpy one download at a time (the small ones
# together, torch last so that its presence means a finished install): one pip call would keep all
# 2.6 GB of downloads beside the 4.7 GB it unpacks, a 7.3 GB peak that filled a CI disk; this way the
# peak stays near the installed size. Temporary files go beside the venv, not to a small /tmp.
install_torch() {
  local need_mb=5500 free_mb
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  free_mb=$(df -Pm "$VENV" | awk 'NR == 2 { print $4 }')
  if ((free_mb < need_mb)); then
    die "installing PyTorch into $VENV needs about $need_mb MB free there, $free_mb MB are free; free some space or set ADAQP_VENV to a disk with room"
  fi
  log "installing PyTorch $TORCH_VERSION into $VENV (about 2.6 GB to download, 4.7 GB installed, with its CUDA runtime wheels; $free_mb MB free)"
  # Not local: the EXIT trap runs once the function has returned (or `set -e` has left it).
  tmp=$(mktemp -d "$VENV/.install.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  "$VENV/bin/python" -m pip install -q --no-cache-dir --upgrade pip
  TMPDIR=$tmp "$VENV/bin/python" -m pip install -q --no-cache-dir --dry-run --ignore-installed \
    --report "$tmp/plan.json" "torch==$TORCH_VERSION" numpy
  "$VENV/bin/python" - "$tmp/plan.json" >"$tmp/plan.txt" <<'PLAN'
import json, sys
pins = [f"{p['metadata']['name']}=={p['metadata']['version']}" for p in json.load(open(sys.argv[1]))["install"]]
big = sorted((p for p in pins if p.lower().startswith(("nvidia", "triton", "torch="))), key=lambda p: p.startswith("torch="))
print(" ".join(p for p in pins if p not in big))
print("\n".join(big))
PLAN
  local reqs
  while read -r -a reqs; do
    ((${#reqs[@]})) || continue
    TMPDIR=$tmp "$VENV/bin/python" -m pip install -q --no-cache-dir --no-deps "${reqs[@]}"
  done <"$tmp/plan.txt"
  rm -rf "$tmp"
  trap - EXIT
}
if ! torch_installed; then
  install_torch
else
  log "PyTorch $TORCH_VERSION: present in $VENV"
fi

[ "${ADAQP_SKIP_BUILD:-0}" = 1 ] && exit 0
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$ADAQP_BUILD_DIR/CMakeCache.txt" ]; then
  # shellcheck disable=SC2086
  cmake -S "$ADAQP_ROOT" -B "$ADAQP_BUILD_DIR" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE="${ADAQP_BUILD_TYPE:-Release}" -DADAQP_PYTHON="$VENV/bin/python" \
    ${ADAQP_CMAKE_ARGS:-}
elif [ -n "${ADAQP_BUILD_TYPE:-}${ADAQP_CMAKE_ARGS:-}" ]; then
  # Given again, they change the existing configuration (its generator stays).
  log "reconfiguring $ADAQP_BUILD_DIR with ADAQP_BUILD_TYPE / ADAQP_CMAKE_ARGS"
  # shellcheck disable=SC2086
  cmake -S "$ADAQP_ROOT" -B "$ADAQP_BUILD_DIR" ${ADAQP_BUILD_TYPE:+-DCMAKE_BUILD_TYPE="$ADAQP_BUILD_TYPE"} \
    -DADAQP_PYTHON="$VENV/bin/python" ${ADAQP_CMAKE_ARGS:-}
fi
log "building in $ADAQP_BUILD_DIR"
cmake --build "$ADAQP_BUILD_DIR" --parallel "$(nproc)"
