#!/usr/bin/env bash
# nccltests_format.sh - `preflight collective` read back as nccl-tests output (issue 26, item 3): a reader
# written to nccl-tests' format (common.cu's header, out-of-place and in-place column groups, #wrong, the
# per-rank count each op's *GetCollByteCount prints, the closing lines) parses it; `validate` recognises
# nccl-tests / rccl-tests output by its content whatever the file is called (out.txt), and prints collective
# rows as CSV.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT

for op in all_reduce all_gather reduce_scatter alltoall sendrecv; do
  expect_exit 0 $P collective --machine lumi-g --nodes 2 --op $op -b 1M -e 64M -f 4
  cp "$T/out" "$T/$op.txt"
  python3 - "$T/$op.txt" $op 16 <<'PY' && ok || bad "$op: not nccl-tests' format"
import sys
path, op, p = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(path).read().splitlines()
# the two column groups, as nccl-tests titles them
groups = [l for l in lines if l.startswith("#") and "out-of-place" in l]
assert len(groups) == 1 and "in-place" in groups[0] and groups[0].index("out-of-place") < groups[0].index("in-place")
head = [l for l in lines if l.startswith("#") and "count" in l and "busbw" in l][0].lstrip("#").split()
assert head[:5] == ["size", "count", "type", "redop", "root"], head
assert head[5:13] == ["time", "algbw", "busbw", "#wrong"] * 2, head
factor = {"all_reduce": 2 * (p - 1) / p, "sendrecv": 1.0}.get(op, (p - 1) / p)
per_rank = op in ("all_gather", "reduce_scatter", "alltoall")
rows = [l.split() for l in lines if l and not l.startswith("#")]
assert len(rows) == 4, rows
for r in rows:
    size, count, typ, redop, root = int(r[0]), int(r[1]), r[2], r[3], int(r[4])
    out, inp = r[5:9], r[9:13]
    assert typ == "float" and root == -1
    assert redop == ("sum" if op in ("all_reduce", "reduce_scatter") else "none"), redop
    assert count == (size // 4 // p if per_rank else size // 4), (op, size, count)
    for t, alg, bus, wrong in (out, inp):
        assert wrong == "N/A"
        assert float(t) > 0 and abs(float(bus) - float(alg) * factor) <= 0.011 + 0.001 * float(bus), (alg, bus)
    assert out == inp
assert any(l.startswith("# Out of bounds values : 0 OK") for l in lines)
assert any(l.startswith("# Avg bus bandwidth    : ") for l in lines)
assert lines[-1] == "# Collective test concluded: %s_perf" % op, lines[-1]
PY
  # validate: the same file named out.txt, the collective found from its content
  cp "$T/$op.txt" "$T/out.txt"
  expect_exit 0 $P validate "$T/out.txt" --machine lumi-g --format csv
  expect_grep "^line,machine,op,nodes,gpus_per_node,size_B,metric,measured,predicted,error_pct,algorithm,protocol,use,source,reason$" "$T/out"
  n=$(grep -c "^[0-9]*,lumi-g,$op,2,8," "$T/out")
  [ "$n" = 4 ] && ok || bad "validate out.txt ($op): $n rows of $op on 2 x 8, expected 4"
done

# nccl-tests output without the test's name: the command line names it ...
F=$PF_SRC/tests/fixtures/collectives/all_reduce_perf-2x4.txt
{ echo "srun -N 2 --ntasks-per-node=4 ./build/all_gather_perf -b 8 -e 8G -f 2 -g 1"; grep -v "Collective test" "$F"; } >"$T/out.txt"
expect_exit 0 $P validate "$T/out.txt" --machine mn5-acc --format csv
expect_grep "^[0-9]+,mn5-acc,all_gather,2,4," "$T/out"
# ... or, with no name anywhere, busbw / algbw does: 2(p-1)/p is an all-reduce
grep -v "Collective test" "$F" >"$T/out.txt"
expect_exit 0 $P validate "$T/out.txt" --machine mn5-acc --format csv
expect_grep "^[0-9]+,mn5-acc,all_reduce,2,4," "$T/out"
# a file that says nothing about its collective is refused with the ways to name it
printf '# nThread 1\n     1048576        262144     float     sum      -1    100.0    0.01    0.01      0\n' >"$T/out.txt"
expect_exit 2 $P validate "$T/out.txt" --machine mn5-acc
expect_grep "which collective\\?" "$T/err"
finish
