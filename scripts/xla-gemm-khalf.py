#!/usr/bin/env python3
"""xla-gemm-khalf.py - the check behind the Blackwell files' efficiency.gemm_half_dim (docs/model.md,
"k_half per device"): fit the fallback curve's k_half to OpenXLA's measured GEMM tables, one part at a time.

    scripts/xla-gemm-khalf.py TXTPB > calibrate/results/xla-gemm-bf16.csv     extract the BF16 rows
    scripts/xla-gemm-khalf.py --fit calibrate/results/xla-gemm-bf16.csv         fit k_half per part

TXTPB is xla/service/gpu/model/default_matmul_perf_table.txtpb of openxla/xla (the matmul interpolator's
default table; the copy used here is ROCm/xla commit 336c0d19fa, 2026-08).  Each entry is one batched GEMM
(b products of m x n x k, 256-4096 per dimension) with the FLOP/s XLA's generator derived from the median
CUPTI kernel time of five runs on random operands (xla/tools/matmul_perf_table_gen.cc).

The fit uses the curve of model/machine/gemmtab.c (tiles, wave quantization over the part's SMs, split-K,
k/(k + k_half)) with a free top per part, on the products of at least 2^33 FLOPs (smaller ones carry a few us
per kernel that the curve does not have), and prints the mean and median |ln(measured / curve)| for each
k_half of a grid.  Only the ratio of the two parts' best k_half is used: XLA's absolute rates are not this
project's (its operands are not the training data's, and its H100 runs faster than the H100 table here).
"""
import csv
import math
import re
import statistics
import sys

UNITS = {"sm_90": 132, "sm_100_B200": 148}
TILES = ((128, 256), (256, 128), (128, 128), (64, 128), (128, 64))


def shape(units, m, n, k, batch, k_half):
    """gemmtab.c pf_gemm_shape for 16-bit types"""
    best = 0.0
    for tm, tn in TILES:
        t = math.ceil(m / tm) * math.ceil(n / tn) * batch
        smax = min(units // t, k // 32) if t < units else 1
        for sp in range(1, max(smax, 1) + 1):
            slots = math.ceil(t * sp / units) * units
            kc = k / sp
            best = max(best, m * n * batch * sp / (slots * tm * tn) * kc / (kc + k_half))
    return best


def extract(path):
    print("# OpenXLA default_matmul_perf_table.txtpb (ROCm/xla 336c0d19fa), BF16 rows: part, b, m, n, k, FLOP/s "
          "from the median CUPTI kernel time (xla/tools/matmul_perf_table_gen.cc); scripts/xla-gemm-khalf.py")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["part", "b", "m", "n", "k", "flops_per_s"])
    part, cur = None, {}
    for line in open(path):
        s = line.strip()
        g = re.match(r'key: "((?:sm|gfx)[^"]*)"', s)
        if g:
            part = g.group(1)
            continue
        g = re.match(r"([bmnk]): (\d+)$", s)
        if g:
            cur[g.group(1)] = int(g.group(2))
            continue
        g = re.match(r'flops \{ key: "bf16xbf16->bf16" value: (\d+) \}', s)
        if g and part in UNITS:
            w.writerow([part, cur["b"], cur["m"], cur["n"], cur["k"], g.group(1)])


def fit(path):
    rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
    for part, units in UNITS.items():
        data = [(int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"]), float(r["flops_per_s"])) for r in rows
                if r["part"] == part]
        data = [d for d in data if 2.0 * d[0] * d[1] * d[2] * d[3] >= 2 ** 33]
        print("%s (%d SMs), %d products of at least 2^33 FLOPs" % (part, units, len(data)))
        for kh in (50, 101, 150, 202, 250, 300, 400, 500, 600):
            lr = [math.log(f / shape(units, m, n, k, b, kh)) for b, m, n, k, f in data]
            top = statistics.median(lr)
            err = [abs(x - top) for x in lr]
            print("  k_half %4d: top %6.0f TFLOP/s, |ln error| mean %.3f, median %.3f"
                  % (kh, math.exp(top) / 1e12, sum(err) / len(err), statistics.median(err)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--fit":
        fit(sys.argv[2])
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        extract(sys.argv[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
