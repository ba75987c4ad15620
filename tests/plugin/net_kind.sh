#!/usr/bin/env bash
# net_kind.sh - the recipe "Adding a network kind" (docs/architecture.md) followed from tests/:
# preflight-toy, the preflight command's sources plus tests/plugin/toy_net.c, knows the toy kind
# "toy_ring" (a one-way ring) through the registration call the built-in kinds use; it lists and
# describes a machine of that kind (tests/plugin/toy.cfg), predicts on it, and prices collectives on
# its links.  The plain preflight, without toy_net.c, rejects the kind naming the file, line and key.
set -u
. "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
PT=$PREFLIGHT_TOY
TOY=$PF_SRC/tests/plugin/toy.cfg
num() { json_get "$T/out" "$1"; }
# a copy of the toy machine with sed edits: variant NAME SED-SCRIPT
variant() { sed "$2" "$TOY" >"$T/$1.cfg"; }

# machines show: the kind's name from the table and its own one-line description
expect_exit 0 "$PT" machines show "$TOY"
expect_grep '^  network +toy_ring, one-way ring, 2 lanes per hop \(toy ring\)$' "$T/out"
expect_exit 0 "$PT" machines show "$TOY" --format json
[ "$(num "['topology']['kind']")" = toy_ring ] && ok || bad "machines show --format json: topology.kind"
[ "$(num "['topology']['parameters']")" = "one-way ring, 2 lanes per hop" ] && ok || bad "topology.parameters"
# the kinds are listed from the table: the toy one after the built-ins
expect_exit 0 "$PT" machines new my-ring -o -
expect_grep '# fat_tree \| dragonfly \| dragonfly_plus \| torus \| single \| toy_ring$' "$T/out"
variant nosuch 's/topology = "toy_ring";/topology = "no_such_kind";/'
expect_exit 2 "$PT" machines show "$T/nosuch.cfg"
expect_grep 'machine.network.topology: unknown value "no_such_kind"; valid: .*, single, toy_ring$' "$T/err"

# predict runs on it, with sensible numbers: the same step as on one switch when the NIC is the
# bottleneck, slower when the ring's links are (one lane of 50 Gb/s against a 200 Gb/s NIC)
run='predict --model llama2-7b --nodes 8 --tp 4 --gbs 256 --format json'
expect_exit 0 "$PT" $run --machine "$TOY"
ring=$(num "['iteration_time_s']"); dp=$(num "['breakdown_s']['dp_comm_exposed']")
variant single 's/topology = "toy_ring";/topology = "single";/; /lanes = 2;/d'
expect_exit 0 "$P" $run --machine "$T/single.cfg"
one=$(num "['iteration_time_s']")
variant slow 's/link_rate = "200 Gbps";/link_rate = "50 Gbps";/; s/lanes = 2;/lanes = 1;/'
expect_exit 0 "$PT" $run --machine "$T/slow.cfg"
slow=$(num "['iteration_time_s']"); slowdp=$(num "['breakdown_s']['dp_comm_exposed']")
python3 - "$ring" "$dp" "$one" "$slow" "$slowdp" <<'PY' && ok || bad "toy ring predictions: step $ring s (DP $dp s), one switch $one s, 50 Gb/s ring $slow s (DP $slowdp s)"
import math, sys
ring, dp, one, slow, slowdp = map(float, sys.argv[1:])
assert all(math.isfinite(x) and x > 0 for x in (ring, dp, one, slow, slowdp))
assert ring >= one * (1 - 1e-9) and ring < one * 1.01   # NIC-bound: the ring's extra hops cost latency only
assert slow > ring and slowdp > 2 * dp                   # a quarter of the NIC's rate per hop: DP slows down
PY

# collective: an all-to-all on a one-way ring crosses up to 15 of its links, so it is slower than on one switch
coll='collective --nodes 16 -b 64M -e 64M --op alltoall'
expect_exit 0 "$PT" $coll --machine "$TOY"
ringbw=$(awk '$1 == 67108864 {print $8}' "$T/out")
expect_exit 0 "$P" $coll --machine "$T/single.cfg"
onebw=$(awk '$1 == 67108864 {print $8}' "$T/out")
python3 -c "import sys; r, o = float(sys.argv[1]), float(sys.argv[2]); assert 0 < r < o / 2" "$ringbw" "$onebw" \
  && ok || bad "alltoall bus bandwidth: ring $ringbw GB/s, one switch $onebw GB/s"

# the toy kind reads and checks its own keys with the strict readers
variant lanes 's/lanes = 2;/lanes = 0;/'
expect_exit 2 "$PT" machines show "$T/lanes.cfg"
expect_grep 'lanes.cfg:[0-9]+: machine.network.lanes: must be at least 1' "$T/err"
variant big 's/nodes = 16;/nodes = 40;/'
expect_exit 2 "$PT" machines show "$T/big.cfg"
expect_grep 'big.cfg:[0-9]+: machine.nodes: 40 is outside .*32\]: a toy ring of at most 32 routers' "$T/err"
# a key of another kind is not the toy's: an unknown key (each kind owns its keys)
variant foreign 's/lanes = 2;/lanes = 2; endpoints_per_leaf = 16;/'
expect_exit 2 "$PT" machines show "$T/foreign.cfg"
expect_grep 'foreign.cfg:[0-9]+: machine.network.endpoints_per_leaf: unknown key' "$T/err"

# the plain preflight does not know the kind: exit 2, the file, line and key, the valid kinds
expect_exit 2 "$P" machines show "$TOY"
expect_grep 'toy.cfg:[0-9]+: machine.network.topology: unknown value "toy_ring"; valid: fat_tree, dragonfly, dragonfly_plus, torus, single$' "$T/err"
expect_exit 2 "$P" ${run% --format json} --machine "$TOY"
expect_grep 'toy.cfg:[0-9]+: machine.network.topology: unknown value "toy_ring"' "$T/err"
expect_exit 0 "$P" machines new my-ring -o -
expect_grep '# fat_tree \| dragonfly \| dragonfly_plus \| torus \| single$' "$T/out"
finish
