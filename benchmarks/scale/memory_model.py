"""The memory model of docs/memory.md: a rank's peak resident memory in training, on the CPU.

From a partition's per-part counts (`adaqp info --partition DIR --json`) and the job's model and
communication settings, predicts each rank's training-phase peak: the process baseline, what a rank
keeps for the whole run (its part, the normalised adjacency, A X), and the largest set of
per-epoch tensors alive at one moment of the epoch's schedule (src/model/gnn.cpp,
dist_aggregate.cpp, dropout.cpp; exchange buffers of dist_graph.cpp and halo_exchanger.cpp).

Usage: memory_model.py INFO_JSON --feat F --classes C [--hidden 256 --layers 3 --model gcn
         --mode vanilla --feature-cache 1 --layer-norm 0 --recompute none --dropout 0.5
         --baseline-mib 400]
Prints one JSON object: per part the predicted peak and its terms, in bytes.
"""
import argparse
import json
import math

F32, I32, I64 = 4, 4, 8
MIB = 2**20
# glibc, as adaqp sets it (src/cli/main.cpp), maps blocks from 32 MiB and returns them when freed;
# smaller ones come from the heap, which keeps freed blocks for reuse (up to 256 MiB). What it
# keeps depends on the order of allocations: 40-260 MiB measured; the model allows the middle.
HEAP_RETAINED = 96 * MIB
# Adaptive scheme: bytes per message of one exchange that the solver keeps (its problem's message,
# 16 bytes; the budget solver's upgrade steps, about 2 x 29 bytes; widths, ranges, variance terms).
ADAPTIVE_BYTES_PER_MESSAGE = 48


def words(width):
    return math.ceil(width / 32)


def persistent(p, a):
    """Bytes a rank keeps from start-up to the end, beyond the process baseline."""
    n, h, s = p["owned"], p["halo"], p["sent_rows"]
    e = p["in_edges"]
    el = p["local_in_edges"]
    eh = e - el
    sage = a.model == "sage"
    terms = {
        # Part (partition/part.h): global ids, two CSR row pointers, column indices, degrees of
        # owned and halo nodes, the send list, labels and the split lists (at most one per node).
        "part": I64 * n + I64 * h + 2 * I64 * (n + 1) + I32 * e + 2 * I64 * (n + h)
                + I64 * s + I64 * n + I64 * n,
        # The input features: kept by GraphSAGE (root term) and without the feature cache.
        "features": F32 * n * a.feat if (sage or not a.feature_cache) else 0,
        # A_local and A_halo values; A_local^T's own values for GraphSAGE (GCN's is A_local);
        # A_halo^T (row pointers, columns, values); A X; the owned nodes' ids on the device.
        "adjacency": F32 * e + (F32 * el if sage else 0) + I64 * (h + 1) + (I32 + F32) * eh,
        "ax": F32 * n * a.feat,
        # Device copies of the send list, its global ids, the halo ids, labels and split lists.
        "index_copies": 2 * I64 * s + I64 * h + I64 * n + I64 * n,
    }
    if a.mode in ("quant", "adaqp"):
        # Quantized blocks, kept and grown to the largest exchange: at most 8 bits plus 8 bytes of
        # metadata per row, send and receive.
        widest = a.hidden if a.feature_cache else max(a.hidden, a.feat)
        terms["quant_buffers"] = 2 * max(s, h) * (8 + widest)
    if a.mode == "adaqp":
        exchanges = 2 * (a.layers - 1) + (0 if a.feature_cache else 1)
        terms["adaptive"] = ADAPTIVE_BYTES_PER_MESSAGE * (s + h) * exchanges
    return terms


def epoch_peak(p, a):
    """The largest set of per-epoch tensors alive at once, and where it happens."""
    n, h, s = p["owned"], p["halo"], p["sent_rows"]
    sage = a.model == "sage"
    overlap = a.mode in ("overlap", "adaqp")
    quantized = a.mode in ("quant", "adaqp")
    drop = a.dropout > 0
    widths = [a.feat] + [a.hidden] * (a.layers - 1) + [a.classes]
    moments = []  # (bytes, where)
    saved = 0     # tensors kept for backward so far

    def exchange(d, forward):
        """Buffers of one exchange of rows of width d: halo rows and boundary rows."""
        halo = F32 * h * d
        # Forward quantized rows are encoded straight from h (no gathered copy).
        boundary = 0 if (forward and quantized) else F32 * s * d
        return halo, boundary

    def act(d):
        return F32 * n * d

    # Layer 0: A X is persistent; its rows masked into a temporary, then y0.
    out0 = widths[1]
    if drop:
        saved += I32 * n * words(2 * a.feat if sage else a.feat)
    # GraphSAGE masks A X and X one after the other (model/dropout.cpp: each temporary freed before
    # the next; counted twice until 2026-12-08, 24% high where layer 0 is the peak).
    tmp0 = act(a.feat) if drop else 0
    moments.append((saved + tmp0 + act(out0) * (2 if sage else 1), "layer 0 forward"))
    inputs = act(out0)  # the next layer's input (ReLU and dropout in place)
    layer_saved = []
    for l in range(1, a.layers):
        d_in, d_out = widths[l], widths[l + 1]
        saved += 2 * I32 * n * words(d_in)  # ReLU signs and keep bits of this input
        if a.layer_norm:
            saved += act(d_in) + 2 * F32 * n  # LayerNorm keeps its input, mean and rstd
        x = inputs
        if d_out >= d_in:  # aggregate first: z = A h, y = z W^T + b (dist_aggregate_linear)
            halo, bnd = exchange(d_in, True)
            z, y = act(d_in), act(d_out)
            root = act(d_out) if sage else 0
            if overlap:
                moments.append((saved + x + halo + bnd + z + y + root, f"layer {l} forward"))
            else:
                moments.append((saved + x + max(halo + bnd, halo + z, z + y + root),
                                f"layer {l} forward"))
            # Kept: A h, or (recomputing) h and the halo rows; and h for GraphSAGE's root term.
            recompute = a.recompute == "aggregations"
            keep = (x + halo if recompute else z) + (x if sage and not recompute else 0)
            layer_saved.append(("agg", l, keep, d_in, d_out))
            saved += keep
            inputs = y
        else:  # narrow first: y = A (h W^T) + b (+ h R^T)
            halo, bnd = exchange(d_out, True)
            m = act(d_out)
            moments.append((saved + x + m + max(halo + bnd, halo + m) + 2 * m + (2 * m if sage else 0),
                            f"layer {l} forward"))
            layer_saved.append(("narrow", l, x, d_in, d_out))
            saved += x
            inputs = act(d_out)
    # The loss over the training rows: logits, the selected rows and their log-softmax.
    logits = act(a.classes)
    moments.append((saved + logits + 2 * F32 * p["train"] * a.classes, "loss"))

    # Backward, last layer first; each layer's saved tensors are freed after its backward.
    grad = logits  # dL/dlogits (and the accumulated copy of index_select's backward)
    for kind, l, keep, d_in, d_out in reversed(layer_saved):
        if kind == "narrow":
            halo, bnd = exchange(d_out, False)
            dh = act(d_in)
            moments.append((saved + 2 * grad + max(halo + bnd, grad + bnd) , f"layer {l} backward (exchange)"))
            moments.append((saved + 2 * grad + dh + (dh if sage else 0), f"layer {l} backward"))
        else:
            halo, bnd = exchange(d_in, False)
            dy, dz, dh = act(d_out), act(d_in), act(d_in)
            z = act(d_in)  # freed once the weight gradient is made; GraphSAGE's h stays saved
            # What stays saved through this layer's backward besides z (recomputing: z is made
            # from h and the halo rows first, and they go).
            rest = saved - keep + (act(d_in) if sage or a.recompute == "aggregations" else 0)
            root = act(d_in) if sage else 0  # dh's root term, dy R
            if overlap:
                moments.append((rest + z + dy + dz + halo + bnd, f"layer {l} backward"))
                moments.append((rest + dy + dz + halo + bnd + root, f"layer {l} backward"))
                moments.append((rest + dz + halo + bnd + dh + root,
                                f"layer {l} backward (after dW)"))
            else:
                moments.append((rest + z + dy + dz, f"layer {l} backward"))
                moments.append((rest + dy + dz + root, f"layer {l} backward"))
                moments.append((rest + dz + root + max(halo + bnd, bnd + dh),
                                f"layer {l} backward (exchange)"))
        saved -= keep
        grad = act(d_in)
    moments.append((saved + grad + (act(a.feat) if drop else 0), "layer 0 backward"))
    peak, where = max(moments)
    return peak + HEAP_RETAINED, where


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("info", help="adaqp info --partition DIR --json output")
    ap.add_argument("--feat", type=int, required=True)
    ap.add_argument("--classes", type=int, required=True)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--model", choices=["gcn", "sage"], default="gcn")
    ap.add_argument("--mode", choices=["vanilla", "overlap", "quant", "adaqp"], default="vanilla")
    ap.add_argument("--feature-cache", type=int, default=1)
    ap.add_argument("--layer-norm", type=int, default=0)
    ap.add_argument("--recompute", choices=["none", "aggregations"], default="none")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--baseline-mib", type=float, default=400,
                    help="the process before any graph data: libraries, MPI, libtorch")
    a = ap.parse_args()
    info = json.load(open(a.info))["partition"]
    parts = []
    for p in info["per_part"]:
        terms = persistent(p, a)
        peak, where = epoch_peak(p, a)
        total = a.baseline_mib * 2**20 + sum(terms.values()) + peak
        parts.append({"part": p["part"], "predicted_peak_bytes": int(total),
                      "baseline_bytes": int(a.baseline_mib * 2**20), "persistent_bytes": terms,
                      "epoch_peak_bytes": int(peak), "epoch_peak_at": where})
    print(json.dumps({"parts": parts}))


if __name__ == "__main__":
    main()
