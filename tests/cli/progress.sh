#!/usr/bin/env bash
# progress.sh - a progress bar on stderr when it is a terminal (items done, rate, time
# left) for sweep, tune and validate; nothing when stderr is not a terminal
# (issue 13 item 5).  script(1) gives the command a terminal.  The sweep simulates every GPU
# (--engine full, 2,048 GPUs) to last long enough for a rate; the sanitizer run skips it.
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
unset PREFLIGHT_PROGRESS
if ! command -v script >/dev/null; then echo "script(1) not found: skipped"; exit 0; fi
SW="sweep --machine leonardo-booster --model gpt3-1.3b --tp 1 --pp 4 --gbs 2048 --engine full --nodes 512 --vary mbs=1,2 --vary recompute=selective,full"
V="validate $PF_SRC/scenarios/validation/maelstrom.csv"
script -qec "$P $SW -o $T/sweep.txt" /dev/null > "$T/tty.txt" 2>&1 && ok || bad "sweep on a terminal"
expect_grep 'sweep  [0-9]/4 \[#*-*\]' "$T/tty.txt"
expect_grep 'items/s  ETA [0-9]+ s' "$T/tty.txt"
expect_grep 'sweep  4/4 \[####################\]' "$T/tty.txt"
# the bar is erased when it completes, so what follows (results, warnings) prints on a clean line
grep -qP '4/4 \[#{20}\][^\r]*\x1b\[K\r\x1b\[K' "$T/tty.txt" && ok ||
  bad "bar not erased: $(tail -c 40 "$T/tty.txt" | od -c | head -3)"
# validate counts bytes of the file, tune the plans it tries.  The bar is drawn at most every 0.1 s, so the
# file on the terminal must take longer than that: rows that simulate every GPU (an `engine` option column),
# not the MAELSTROM file, which validates in well under 0.1 s
H="machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule"
H="$H,metric,value,unit,baseline_nodes,source,notes,params,flops_per_sample,grad_accum,scaling,bound,value_hi"
echo "$H,iterations,scope,use,tag,engine" > "$T/slow.csv"
for n in 8 16 32 64; do for m in 1 2; do
  echo "leonardo-booster,gpt3-1.3b,,,,,,$n,,1,4,,$m,$((n * 16 * m)),,,,,,iteration_time_s,1,s,,synthetic,,,,,,,,,,,,full"
done; done >> "$T/slow.csv"
script -qec "$P validate $T/slow.csv -o $T/v.txt" /dev/null > "$T/tty.txt" 2>&1
expect_grep 'validate  [0-9.]+ KiB/[0-9.]+ KiB' "$T/tty.txt"
# not a terminal: nothing on stderr
expect_exit 0 $P $V
[ ! -s "$T/err" ] && ok || bad "output on stderr without a terminal: $(head -c 200 "$T/err")"
# PREFLIGHT_PROGRESS=0 silences it on a terminal too
script -qec "env PREFLIGHT_PROGRESS=0 $P $V -o $T/v.txt" /dev/null > "$T/tty0.txt" 2>&1
grep -q 'validate  [0-9]' "$T/tty0.txt" && bad "PREFLIGHT_PROGRESS=0 drew a bar" || ok
script -qec "$P tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 -o $T/t.txt" /dev/null > "$T/tty.txt" 2>&1
expect_grep 'tune  [0-9]+/[0-9]+ \[' "$T/tty.txt"
# a loop inside a loop (issue 24): plan's scales, each tuned, and sweep --tune-each draw the inner bar inside
# the outer one, and no count ever passes its total (plan once showed "48484/3", full from the start)
counts_ok() { tr '\r' '\n' < "$1" | grep -oE '[0-9]+/[0-9]+ ' | awk -F'[/ ]' '$1 > $2 {print; bad = 1} END {exit bad}' \
  && ok || bad "$2: a count past its total"; }
script -qec "$P plan --machine leonardo-booster --model llama2-13b --gbs 512 --tokens 2e11 --nodes 16,32 -o $T/p.txt" /dev/null > "$T/tty.txt" 2>&1
expect_grep 'plan  [01]/2  tune  [0-9]+/[0-9]+ \[' "$T/tty.txt"
counts_ok "$T/tty.txt" plan
# the bar starts empty: the first line drawn is not full
first=$(tr '\r' '\n' < "$T/tty.txt" | grep -m1 'plan  ')
[[ "$first" == *'[#'*'-]'* || "$first" == *'[-'* ]] && ok || bad "plan's first bar is full: $first"
script -qec "$P sweep --machine leonardo-booster --model llama2-13b --gbs 512 --nodes 16,32 --tune-each -o $T/s.txt" /dev/null > "$T/tty.txt" 2>&1
expect_grep 'sweep  [01]/2  tune  [0-9]+/[0-9]+ \[' "$T/tty.txt"
counts_ok "$T/tty.txt" "sweep --tune-each"
finish
