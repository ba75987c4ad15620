#!/usr/bin/env bash
# sweep_epicure.sh - the EPICURE LUMI-G GPT-3 175B scaling scenarios
# (scenarios/epicure-lumi-{weak,strong}.cfg) run and show the reported shape:
# weak scaling stays above 80 % at 32x the baseline nodes; strong scaling (GBS 1536)
# falls steadily as the microbatches per replica shrink (EPICURE: to 45 %; see
# docs/engine.md for where the model stands and why).  Prints both curves.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
for kind in weak strong; do
  expect_exit 0 $P sweep "$PF_SRC/scenarios/epicure-lumi-$kind.cfg" --format csv
  cp "$T/out" "$T/$kind.csv"
done
python3 - "$T/weak.csv" "$T/strong.csv" <<'PY' && ok || bad "EPICURE LUMI scaling shape"
import csv, sys
def rows(path):
    return [(int(r["nodes"]), float(r["scaling_efficiency"]), int(r["microbatches"])) for r in csv.DictReader(open(path))]
weak, strong = rows(sys.argv[1]), rows(sys.argv[2])
for name, rs, ref in (("weak", weak, "EPICURE: > 80 % at 512"), ("strong", strong, "EPICURE: 45 % at the largest")):
    print(f"{name:6s} " + "  ".join(f"{n}:{100*e:.1f}%" for n, e, _ in rs) + f"   ({ref})")
assert [n for n, _, _ in weak] == [16, 32, 64, 128, 256, 512] == [n for n, _, _ in strong]
assert all(m == 192 for _, _, m in weak), weak
assert [m for _, _, m in strong] == [1536, 768, 384, 192, 96, 48], strong
assert weak[-1][1] > 0.80                                   # weak stays above 80 % at 32x
assert all(a[1] >= b[1] for a, b in zip(strong, strong[1:]))  # strong falls monotonically
assert strong[-1][1] < 0.80 and strong[-1][1] < weak[-1][1]  # ... and well below weak at 512
PY
finish
