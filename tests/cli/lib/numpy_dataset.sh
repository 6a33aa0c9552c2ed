# shellcheck shell=bash
# without_training_nodes SRC DST: a copy of the NumPy-layout dataset SRC in DST whose train.npy
# holds no node (an int64 array of shape (0,), written here without NumPy).
without_training_nodes() {
  cp -r "$1" "$2"
  python3 - "$2/train.npy" <<'PY'
import sys
header = "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }"
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
PY
}
