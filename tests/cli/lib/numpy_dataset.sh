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

# without_features SRC DST NODES: a copy of SRC in DST whose feat.npy has NODES rows of 0 columns
# (a float32 array of shape (NODES, 0)).
without_features() {
  cp -r "$1" "$2"
  python3 - "$2/feat.npy" "$3" <<'PY'
import sys
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 0), }" % int(sys.argv[2])
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
PY
}

# with_one_class SRC DST NODES: a copy of SRC in DST whose label.npy gives all NODES nodes class 0
# (an int64 array of shape (NODES,)).
with_one_class() {
  cp -r "$1" "$2"
  python3 - "$2/label.npy" "$3" <<'PY'
import sys
nodes = int(sys.argv[2])
header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % nodes
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    f.write(bytes(8 * nodes))
PY
}
