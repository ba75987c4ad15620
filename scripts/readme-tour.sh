#!/usr/bin/env bash
# readme-tour.sh - run the README's tour commands and paste their real output
# between <!-- tour:begin --> and <!-- tour:end -->.  Usage: scripts/readme-tour.sh [build/preflight]
set -euo pipefail
cd "$(dirname "$0")/.."
PF=${1:-build/preflight}
# the plan prints where it looked for measured runs: keep that path relative to the repository
export PREFLIGHT_VALIDATION=scenarios/validation
out=$(mktemp)
trap 'rm -f "$out" "$out.readme"' EXIT
run() {
  printf '$ %s\n' "$*" | sed "s#^\$ $PF#\$ build/preflight#" >> "$out"
  "$@" >> "$out" 2>&1 || true
  echo >> "$out"
}
{
  echo '```'
} > "$out"
run "$PF" machines
run "$PF" machines show lumi-g
run "$PF" models show gpt3-175b
run "$PF" predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective
run "$PF" sweep --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --grad-accum 192 --precision fp16 --sp --dist-opt --recompute selective --nodes 16,32,64,128,256,512 --scaling weak
run "$PF" sweep --machine westai-h100 --model gpt3-13b --nodes 1 --tp 4 --mbs 4 --gbs 64 --sp --dist-opt --flash-attn --recompute selective --power-cap 300,400,500,700
run "$PF" tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 --top 5
run "$PF" compare --machines lumi-g,leonardo-booster,mn5-acc,jupiter-booster --model llama2-7b --gpus 64 --tp 2 --gbs 512 --dist-opt --recompute selective
run "$PF" plan --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective --nodes 16,32,64,128 --tokens 3e11
echo '```' >> "$out"
python3 - "$out" <<'PY'
import re, sys
body = open(sys.argv[1]).read()
readme = open("README.md").read()
new = re.sub(r"<!-- tour:begin -->.*?<!-- tour:end -->",
             lambda m: "<!-- tour:begin -->\n" + body + "<!-- tour:end -->", readme, flags=re.S)
open("README.md", "w").write(new)
PY
echo "README tour updated" >&2
