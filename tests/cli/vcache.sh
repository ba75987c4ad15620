#!/usr/bin/env bash
# vcache.sh - the validation rows behind a prediction's range are kept on disk between runs (study/vdisk.h;
# docs/validation.md, "Prediction intervals"): a second run reads them and prints the same bytes; an entry
# that is garbage, a folder that cannot be made and PREFLIGHT_CACHE=off change nothing but the time; an
# edited machine file or validation row is a new key, never an old entry.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
A="predict --machine leonardo-booster --model llama2-7b --nodes 4 --tp 2 --pp 2 --format json"
C=$T/cache

PREFLIGHT_CACHE=off $P $A >"$T/off.json" && ok || bad "predict with the cache off failed"
[ ! -e "$C" ] && ok || bad "PREFLIGHT_CACHE=off made a folder"

PREFLIGHT_CACHE=$C $P $A >"$T/first.json" && ok || bad "predict (cache empty) failed"
cmp -s "$T/off.json" "$T/first.json" && ok || bad "filling the cache changed the output"
n=$(ls "$C" | grep -c '^rows-.*\.tsv$')
[ "$n" -ge 1 ] && ok || bad "no entry written ($n)"
[ "$(stat -c %a "$C")" = 700 ] && ok || bad "the cache folder is not private: $(stat -c %a "$C")"

inodes=$(stat -c %i "$C"/rows-*.tsv)
PREFLIGHT_CACHE=$C $P $A >"$T/second.json" && ok || bad "predict (cache full) failed"
cmp -s "$T/first.json" "$T/second.json" && ok || bad "a cache hit changed the output"
# a hit predicts no row, so it writes no entry (a write renames a new file over the old: a new inode)
[ "$(stat -c %i "$C"/rows-*.tsv)" = "$inodes" ] && ok || bad "a hit rewrote its entries"

for f in "$C"/rows-*.tsv; do printf 'preflight validation predictions 1\tnot-a-key\n7\tx\n' >"$f"; done
PREFLIGHT_CACHE=$C $P $A >"$T/garbage.json" && ok || bad "predict with garbage entries failed"
cmp -s "$T/first.json" "$T/garbage.json" && ok || bad "a garbage entry changed the output"
grep -q '^preflight validation predictions 1	[0-9a-f]\{16\}$' "$(ls "$C"/rows-*.tsv | head -1)" && ok \
  || bad "a garbage entry was not written again"

# a truncated entry (its first row cut in the middle) is a miss too
for f in "$C"/rows-*.tsv; do { head -n 1 "$f"; sed -n 2p "$f" | head -c 12; } >"$T/cut" && cp "$T/cut" "$f"; done
PREFLIGHT_CACHE=$C $P $A >"$T/cut.json" && ok || bad "predict with truncated entries failed"
cmp -s "$T/first.json" "$T/cut.json" && ok || bad "a truncated entry changed the output"

# a folder that cannot be made: the same output, no message
PREFLIGHT_CACHE=/proc/preflight-cache $P $A >"$T/nodir.json" 2>"$T/err" && ok || bad "an unusable folder failed"
cmp -s "$T/first.json" "$T/nodir.json" && ok || bad "an unusable folder changed the output"
# (under AddressSanitizer SimGrid's context switches make ASan print a three-line warning of its own: not ours)
grep -v -e 'ASan is ignoring requested __asan_handle_no_return' -e '^False positive error reports may follow' \
  -e '^For details see https://github.com/google/sanitizers/issues/189' "$T/err" >"$T/err.ours"
[ ! -s "$T/err.ours" ] && ok || bad "an unusable folder printed: $(head -2 "$T/err.ours")"

# an edited machine file is a new key: the rows are predicted again, with the new file
cp -r "$PF_SRC/machines" "$T/mx"
sed -i 's/^      nvls_efficiency = 0.69;/      nvls_efficiency = 0.70;/' "$T/mx/dgx-h100-superpod.cfg"
before=$(ls "$C" | grep -c '^rows-')
PREFLIGHT_MACHINES=$T/mx PREFLIGHT_CACHE=$C $P $A >"$T/edited.json" && ok || bad "predict with an edited machine failed"
[ "$(ls "$C" | grep -c '^rows-')" -gt "$before" ] && ok || bad "an edited machine file reused the old entries"

# an edited validation row is a new key, and its new measurement moves the range as without a cache
mkdir -p "$T/val" && cp "$PF_SRC"/scenarios/validation/*.csv "$T/val/"
sed -i 's/,iteration_time_s,1.42,s,/,iteration_time_s,2.84,s,/' "$T/val/megatron.csv"
grep -q ',iteration_time_s,2.84,s,' "$T/val/megatron.csv" && ok || bad "the row edit did not apply"
PREFLIGHT_VALIDATION=$T/val PREFLIGHT_CACHE=$C $P $A >"$T/val-cached.json" && ok || bad "predict (edited row) failed"
PREFLIGHT_VALIDATION=$T/val PREFLIGHT_CACHE=off $P $A >"$T/val-off.json" && ok || bad "predict (edited row, off) failed"
cmp -s "$T/val-cached.json" "$T/val-off.json" && ok || bad "an edited row read an old entry"
# the folder keeps the 256 newest entries: 300 old ones and a run that writes its own leave 256, its own among them
P2=$T/prune
mkdir -p "$P2"
for ((i = 1; i <= 300; i++)); do printf 'x\n' >"$P2/rows-old$i.tsv"; done
touch -d '2020-01-01' "$P2"/rows-old*.tsv
PREFLIGHT_CACHE=$P2 $P $A >"$T/prune.json" && ok || bad "predict with a full cache folder failed"
cmp -s "$T/first.json" "$T/prune.json" && ok || bad "pruning changed the output"
[ "$(ls "$P2" | grep -c '^rows-')" = 256 ] && ok || bad "pruning left $(ls "$P2" | grep -c '^rows-') entries, not 256"
[ "$(ls "$P2" | grep -c '^rows-[0-9a-f]\{16\}\.tsv$')" -ge 1 ] && ok || bad "pruning removed the entries just written"
finish
