#!/usr/bin/env bash
# demo.sh - the main job: GPT-3 175B as EPICURE ran it on MareNostrum 5 ACC, then the
# allocation a proposal would request for 300 B tokens on LUMI-G, with its scaling table.
set -eu
PF=${1:-build/preflight}
echo "== GPT-3 175B on MareNostrum 5 ACC, 32 nodes (EPICURE's configuration) =="
"$PF" predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 \
  --precision fp16 --sp --dist-opt --recompute selective
echo
echo "== Plan: GPT-3 175B, 300 B tokens on LUMI-G =="
"$PF" plan --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 \
  --sp --dist-opt --recompute selective --nodes 16,32,64,128,256 --tokens 3e11
