#!/usr/bin/env bash
# demo.sh - the main job: size a GPT-3 175B pre-training run on MareNostrum 5 ACC
# (the EPICURE configuration), then its weak-scaling table on LUMI-G.
set -eu
PF=${1:-build/preflight}
echo "== GPT-3 175B on MareNostrum 5 ACC, 32 nodes (EPICURE's configuration) =="
"$PF" predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 \
  --precision fp16 --sp --dist-opt --recompute selective
echo
echo "== Weak scaling on LUMI-G (192 microbatches per model copy) =="
"$PF" sweep --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --grad-accum 192 --precision fp16 \
  --sp --dist-opt --recompute selective --nodes 16,32,64,128,256,512 --scaling weak
