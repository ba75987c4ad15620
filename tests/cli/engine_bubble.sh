#!/usr/bin/env bash
# engine_bubble.sh - with links so fast that communication vanishes
# (tests/fixtures/machines/fast.cfg), the pipeline bubble the SimGrid DES
# reports for 1F1B is the textbook one: pp_bubble / iteration_time within 2 %
# of (p-1)/(m+p-1) for PP = 8 and 32 microbatches.  The model has uniform
# stages (a small vocabulary makes the logit layer negligible).
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
FAST="$PF_SRC/tests/fixtures/machines/fast.cfg"
expect_exit 0 $P predict --machine "$FAST" --layers 32 --hidden 4096 --heads 32 --seq 2048 --vocab 1024 \
  --nodes 2 --tp 1 --pp 8 --mbs 2 --grad-accum 32 --recompute selective --schedule 1f1b --format json \
  --no-flash-attn --no-dist-opt --no-overlap-grad-reduce --no-overlap-param-gather # the settings it was written with
python3 - "$T/out" <<'PY' && ok || bad "1F1B bubble share differs from (p-1)/(m+p-1) by more than 2 %"
import json, sys
d = json.load(open(sys.argv[1]))
p, m = d["parallel"]["pp"], d["parallel"]["microbatches"]
share = d["breakdown_s"]["pp_bubble"] / d["iteration_time_s"]
formula = (p - 1) / (m + p - 1)
assert d["engine"]["pipeline"] == "simgrid" and d["engine"]["des_events"] > 0
print(f"PP={p} m={m}: pp_bubble share {share:.5f}, (p-1)/(m+p-1) = {formula:.5f} ({100*(share/formula-1):+.2f} %)")
sys.exit(0 if abs(share / formula - 1) <= 0.02 else 1)
PY
finish
