#!/usr/bin/env bash
# output.sh - -o never harms a user's file (issue 13 item 1), and a failure never looks
# like a result (item 2).  The refusals (read-only file, missing folder, ...) are cases of
# tests/bad-input; here: what -o does with what is there.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
export PREFLIGHT_PROGRESS=0
$P machines > "$T/expect.txt" || bad "machines"

# a new file honours the umask
(umask 027; $P machines -o "$T/new.txt") && ok || bad "new file"
[ "$(stat -c %a "$T/new.txt")" = 640 ] && ok || bad "new file mode $(stat -c %a "$T/new.txt"), umask 027 wants 640"
cmp -s "$T/new.txt" "$T/expect.txt" && ok || bad "-o FILE differs from stdout"

# an existing file keeps its mode
echo old > "$T/keep.txt"; chmod 604 "$T/keep.txt"
$P machines -o "$T/keep.txt" && ok || bad "existing file"
[ "$(stat -c %a "$T/keep.txt")" = 604 ] && ok || bad "mode not kept: $(stat -c %a "$T/keep.txt")"
cmp -s "$T/keep.txt" "$T/expect.txt" && ok || bad "existing file not replaced"

# through a symlink: the target is written (beside it), the link stays a link
mkdir -p "$T/real"; echo old > "$T/real/out.txt"
ln -s real/out.txt "$T/link.txt"
$P machines -o "$T/link.txt" && ok || bad "symlink"
[ -L "$T/link.txt" ] && ok || bad "the symlink was replaced by a file"
cmp -s "$T/real/out.txt" "$T/expect.txt" && ok || bad "the symlink's target was not written"
# a dangling symlink: the file it names is created
ln -s real/later.txt "$T/dangling.txt"
$P machines -o "$T/dangling.txt" && [ -L "$T/dangling.txt" ] && cmp -s "$T/real/later.txt" "$T/expect.txt" \
  && ok || bad "dangling symlink"

# several hard links: refused before any work (a rename would split the names, rewriting in place could be cut
# half-way by a full disk or a signal), every name keeps the old content
echo old > "$T/a.txt"; ln "$T/a.txt" "$T/b.txt"
ino=$(stat -c %i "$T/a.txt")
$P machines -o "$T/a.txt" 2>"$T/err"; [ $? = 2 ] && grep -q "2 hard links" "$T/err" && ok || bad "hard link not refused"
[ "$(stat -c %i "$T/a.txt")" = "$ino" ] && [ "$(stat -c %h "$T/a.txt")" = 2 ] && ok || bad "hard link split"
[ "$(cat "$T/b.txt")" = old ] && [ "$(cat "$T/a.txt")" = old ] && ok || bad "a hard-linked file was changed"

# a FIFO is streamed to, not replaced
mkfifo "$T/pipe"
cat "$T/pipe" > "$T/from-pipe.txt" & reader=$!
$P machines -o "$T/pipe" && ok || bad "fifo"
wait $reader
[ -p "$T/pipe" ] && ok || bad "the FIFO was replaced"
cmp -s "$T/from-pipe.txt" "$T/expect.txt" && ok || bad "FIFO content"

# "-" is standard output
$P machines -o - > "$T/dash.txt" && cmp -s "$T/dash.txt" "$T/expect.txt" && ok || bad "-o -"

# no temporary file is left beside the outputs
if ls -A "$T" "$T/real" | grep -q 'preflight-'; then bad "temporary file left: $(ls -A "$T")"; else ok; fi

# a failure leaves the previous output as it was and prints nothing on stdout
cp "$T/expect.txt" "$T/prev.json"
expect_exit 2 $P predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --bogus -o "$T/prev.json"
cmp -s "$T/prev.json" "$T/expect.txt" && ok || bad "a failed run changed the output"
[ ! -s "$T/out" ] && ok || bad "a failed run printed on stdout"
# with --format json the error is a JSON document on stderr
expect_exit 2 $P predict --machine no-such --model gpt3-175b --nodes 1 --format json
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['error']['code']=='ENOENT' and d['error']['exit_code']==2" \
  "$T/err" && ok || bad "JSON error on stderr"
[ ! -s "$T/out" ] && ok || bad "stdout not empty on error"

# a plan that does not fit is an answer: fits false, the memory terms, no time/throughput/energy
expect_exit 1 $P predict --machine mn5-acc --model gpt3-175b --gpus 1 --tp 1 --pp 1 --gbs 8 --format json
python3 - "$T/out" <<'PY' && ok || bad "does-not-fit document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["fits"] is False and "does not fit" in d["reason"], d
for k in ["iteration_time_s", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu", "energy", "breakdown_s"]:
    assert k not in d, k
assert d["memory_per_gpu_GiB"]["total"] > d["memory_per_gpu_GiB"]["capacity"]
PY
expect_grep "needs [0-9.]+ GiB per GPU" "$T/err"
# ... and a sweep marks such points as rows
SW="--machine leonardo-booster --model llama2-13b --tp 4 --pp 1 --mbs 1 --gbs 512 --dist-opt --sp --no-flash-attn --nodes 1,16"
expect_exit 0 $P sweep $SW --format json
python3 - "$T/out" <<'PY' && ok || bad "sweep rows marked"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows[0]["fits"] is False and "iteration_time_s" not in rows[0] and rows[0]["reason"], rows[0]
assert rows[1]["fits"] is True and rows[1]["iteration_time_s"] > 0 and rows[1]["scaling_efficiency"] == 1
PY
expect_exit 0 $P sweep $SW --format csv
expect_grep '^1,4,4,1,,512,,,,,,,[0-9.]+,false,does not fit' "$T/out"
expect_exit 0 $P sweep $SW
expect_grep '^ +1 +4  \(does not fit: needs' "$T/out"
expect_grep 'warning: 16 nodes: memory per GPU is within 8 %' "$T/err"
# no point runs: exit 1, the rows still say why
expect_exit 1 $P sweep --machine leonardo-booster --model llama2-13b --tp 4 --pp 1 --mbs 1 --gbs 512 --nodes 1,2 \
  --no-flash-attn --no-sp --no-dist-opt   # the settings it was written with (docs/defaults.md)
expect_grep 'does not fit' "$T/out"
# machines and models honour -o
$P models -o "$T/models.csv" && expect_grep '^id,name,params' "$T/models.csv"
# validate --megatron-log honours --format csv: the log as validation rows
expect_exit 0 $P validate --megatron-log "$PF_SRC/tests/fixtures/megatron/current.log" --machine leonardo-booster --format csv
expect_grep '^machine,model,layers' "$T/out"
finish
