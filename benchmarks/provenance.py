"""Where and how a benchmark ran: date, commit, machine, GPU and driver, CUDA, library versions,
the binary's compiler and flags, the command and the settings its script reads from the environment. Every benchmark writes it beside its raw results, so that a figure can be traced
to what produced it.

Usage: provenance.py [--bin ADAQP] -- COMMAND...   (prints one JSON object)
As a module: provenance.collect(command, adaqp_bin=None) returns the same dictionary.
"""
import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine():
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    return "%s, %d cores, %.0f GiB, %s %s" % (cpu, os.cpu_count(), mem_kib / 2**20,
                                             platform.system(), platform.release())


def gpus():
    """One entry per GPU (name, memory, driver), empty without nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return []
    out = _run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                "--format=csv,noheader"])
    rows = []
    for line in out.splitlines():
        name, memory, driver = (f.strip() for f in line.split(","))
        rows.append({"name": name, "memory": memory, "driver": driver})
    return rows


def versions():
    found = {}
    for pkg in ("torch", "torch_geometric", "numpy"):
        try:
            found[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            found[pkg] = None
    try:
        import torch
        found["torch_cuda"] = torch.version.cuda
    except ImportError:
        found["torch_cuda"] = None
    nvcc = _run(["nvcc", "--version"]).splitlines()
    found["nvcc"] = nvcc[-1] if nvcc else None
    found["mpirun"] = (_run(["mpirun", "--version"]).splitlines() or [None])[0]
    return found


def build_of(adaqp_bin):
    """The compiler, its version and the flags of the CMake build that holds the binary (None
    outside one): the same sources behave differently under a fast floating-point model."""
    for d in Path(adaqp_bin).resolve().parents:
        cache = d / "CMakeCache.txt"
        if not cache.is_file():
            continue
        keys = ("CMAKE_CXX_COMPILER", "CMAKE_BUILD_TYPE", "CMAKE_CXX_FLAGS",
                "CMAKE_CXX_FLAGS_RELEASE", "CMAKE_CUDA_COMPILER", "CMAKE_CUDA_FLAGS")
        found = {}
        for line in cache.read_text(errors="replace").splitlines():
            name, _, value = line.partition("=")
            if name.split(":")[0] in keys:
                found[name.split(":")[0]] = value
        for detected in sorted(d.glob("CMakeFiles/*/CMakeCXXCompiler.cmake"))[-1:]:
            for line in detected.read_text(errors="replace").splitlines():
                for key in ("CMAKE_CXX_COMPILER_ID", "CMAKE_CXX_COMPILER_VERSION"):
                    if line.startswith("set(%s " % key):
                        found[key] = line.split(None, 1)[1].rstrip(")").strip('"')
        return found
    return None


def script_settings(command):
    """The upper-case variables a shell script that starts `command` reads (${NAME:-...}, $NAME):
    its settings, whatever script it is."""
    first = command.split(None, 1)[0] if command.strip() else ""
    path = Path(first)
    if not path.is_file() or path.suffix != ".sh":
        return set()
    text = path.read_text(errors="replace")
    return set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", text))


def collect(command, adaqp_bin=None):
    commit = _run(["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=12"])
    read = script_settings(command)
    info = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "commit": commit or "unknown", "machine": machine(), "gpus": gpus(),
        "versions": versions(), "command": command,
        "env": {k: v for k, v in sorted(os.environ.items())
                if k.startswith(("ADAQP_", "OMP_", "NCCL_")) or k in read or k in (
                    "DEVICE", "NODES", "AVG_DEGREE", "FEAT", "CLASSES", "WARMUP", "EPOCHS",
                    "ROUNDS", "MODELS", "PAIRS", "THREADS", "WORKERS", "PYG_ADJ", "RATES", "MODES",
                    "RANKS_PER_HOST", "BASELINE_BIN")},
    }
    if adaqp_bin:
        info["adaqp_version"] = _run([adaqp_bin, "--version"]) or None
        # The commit of the tree the binary was built in (a baseline build may be another one's).
        info["adaqp_commit"] = _run(["git", "-C", str(Path(adaqp_bin).resolve().parent),
                                     "describe", "--always", "--dirty", "--abbrev=12"]) or None
        info["build"] = build_of(adaqp_bin)
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="the adaqp binary (its --version is recorded)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command that ran, after --")
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    print(json.dumps(collect(" ".join(command), a.bin), indent=1))


if __name__ == "__main__":
    main()
