#!/usr/bin/env python3
"""RCCL on Frontier (MI250X, Slingshot-11): validation rows, the measured ring table, and its
leave-one-node-count-out check (docs/communication.md 3.3 and 8).

  frontier-rccl.py rows DATA.csv > scenarios/validation/frontier-rccl.csv
      DATA.csv: shared/data/frontier-rccl/frontier-rccl.csv (axonn-ai/sc2025-pccl-reproducer logs, parsed by
      its build_csv.py).  Writes campaign C (network eager protocol off), leaving out the first-call anomaly
      (1 MiB on 16+ nodes) and one-node all-gather (its harness copies the full buffer inside the timed region).
  frontier-rccl.py fit ROWS.csv [--leave-out NODES]
      the ccl.table figures of machines/frontier.cfg from the rows (rules below), as machine-file lines
  frontier-rccl.py check PREFLIGHT ROWS.csv [--machine FILE.cfg]
      `preflight validate` on the rows; median |error| per class (1 node, 2-8, 16-128) and the share within 2x
  frontier-rccl.py loo PREFLIGHT ROWS.csv
      for each node count: fit on the others, write a machine file with that table, predict the left-out
      rows with preflight, and report the classes over all left-out predictions

Fit rules (one ring step s = (time - the ring's per-call latency) / (ranks - 1) of a ring over p ranks, chunk c = size / p per rank and step):
  fabric_step        one node: median over sizes <= 16 MiB of s - c / B_ring, B_ring the model's ring rate
                     inside the node (the dual xGMI link: 100 GB/s x 0.75, topology.c)
  net_floor_simple   2+ nodes: median of s over chunks 128 KiB - 1 MiB (latency-bound Simple steps)
  factor             2+ nodes: the median rate c / s of reduce-scatter (all-gather times include the harness copy)
                     over chunks >= 8 MiB (bandwidth-bound steps) over the model's
                     network rate of a node (4 NICs x 25 GB/s x 0.90): ccl.efficiency's factor
  net_step_simple    2+ nodes: median of s - c / rate over chunks >= 4 MiB
  net_step_ll, ll_net_bandwidth   2+ nodes: least squares s = a + c / b over chunks <= 32 KiB (LL steps)
A node count left out takes no part in any rule; with one node left out fabric_step has no data and the
table gives none (NCCL's constant stands).
"""
import csv
import os
import statistics
import subprocess
import sys
import tempfile

B_RING = 100e9 * 0.75  # node.fabric.pair_bandwidth x the Infinity Fabric share of topology.c
NIC_RATE = 4 * 25e9 * 0.90  # 4 NICs x 200 Gb/s x the network share of topology.c
BASE = 8.4e-6  # the ring's per-call latency, Simple (NCCL's table, model/comm/coll_ring.c): not part of a step
GPN = 8
HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = """# RCCL reduce-scatter and all-gather on OLCF Frontier (4 MI250X = 8 GCDs per node, Slingshot-11, 4 NICs per
# node: the same node and network as LUMI-G), 1-128 nodes, campaign C of shared/data/frontier-rccl/README.md: the
# libfabric CXI eager protocol off (FI_CXI_RDZV_THRESHOLD=0 FI_CXI_RDZV_GET_MIN=0 FI_CXI_RDZV_EAGER_SIZE=0),
# aws-ofi-rccl plugin, NCCL_CROSS_NIC=1, NCCL_NET_GDR_LEVEL=PHB, RCCL defaults otherwise (no NCCL_ALGO/PROTO);
# one communicator over all ranks, bf16, mean of iterations 11-20 on rank 0.  Written by scripts/frontier-rccl.py
# rows from shared/data/frontier-rccl/frontier-rccl.csv (parsed from axonn-ai/sc2025-pccl-reproducer's raw Slurm
# logs).  Left out: 1 MiB on 16+ nodes (the job's first RCCL call, 2.5-48x slower than 2 MiB: README caveat 1) and
# one-node all-gather (the harness's torch.cat copies the full buffer inside the timed region: README).  Campaigns
# A and B (eager on) are out of scope: their 64-256 KiB-per-rank cliffs are libfabric's eager path, not modelled.
# use = fit: machines/frontier.cfg ccl.table was fitted on these rows (scripts/frontier-rccl.py fit); the
# leave-one-node-count-out check is scripts/frontier-rccl.py loo (docs/communication.md 8).
"""
COLS = ["machine", "op", "nodes", "gpus_per_node", "size_B", "algorithm", "metric", "value", "unit", "bound",
        "value_hi", "use", "source", "notes"]


def cmd_rows(data):
    out = csv.writer(sys.stdout, lineterminator="\n")
    sys.stdout.write(HEADER)
    out.writerow(COLS)
    rows = [r for r in csv.DictReader(open(data)) if r["library"] == "rccl"
            and r["run"].split("/")[0] in ("all_gather_3", "fr_reduce_scatter")]
    rows.sort(key=lambda r: (r["op"], int(r["nodes"]), int(r["size_B"])))
    for r in rows:
        n, s = int(r["nodes"]), int(r["size_B"])
        if n >= 16 and s == 1 << 20:
            continue
        if n == 1 and r["op"] == "all_gather":
            continue
        out.writerow(["frontier", r["op"], n, GPN, s, "", "busbw", r["busbw_GBps"], "GB/s", "", "", "fit",
                      r["source"], "campaign C %s, time %s us" % (r["run"], r["time_us"])])


def load(path):
    rows = []
    for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
        n, s, bus = int(r["nodes"]), float(r["size_B"]), float(r["value"])
        p = n * int(r["gpus_per_node"])
        t = s / (bus * 1e9) * (p - 1) / p  # busbw = size / t x (p-1)/p for reduce-scatter and all-gather
        rows.append(dict(r=r, n=n, p=p, c=s / p, step=(t - BASE) / (p - 1), op=r["op"]))
    return rows


def fit(rows, leave=None):
    use = [x for x in rows if x["n"] != leave]
    one = [x["step"] - x["c"] / B_RING for x in use if x["n"] == 1 and x["c"] * x["p"] <= 16 * 2**20]
    net = [x for x in use if x["n"] > 1]
    floor = [x["step"] for x in net if 128 * 1024 <= x["c"] <= 2**20]
    rate = statistics.median(x["c"] / x["step"] for x in net if x["c"] >= 8 * 2**20 and x["op"] == "reduce_scatter")
    lat = [x["step"] - x["c"] / rate for x in net if x["c"] >= 4 * 2**20]
    ll = [(x["c"], x["step"]) for x in net if x["c"] <= 32 * 1024]
    mc, ms = statistics.fmean(c for c, _ in ll), statistics.fmean(s for _, s in ll)
    slope = sum((c - mc) * (s - ms) for c, s in ll) / sum((c - mc) ** 2 for c, _ in ll)
    t = dict(net_floor_simple=statistics.median(floor), net_step_simple=max(0.0, statistics.median(lat)),
             net_step_ll=max(0.0, ms - slope * mc), ll_net_bandwidth=1 / slope,
             factor=min(1.0, rate / NIC_RATE))
    if one:
        t["fabric_step"] = statistics.median(one)
    return t


def table_lines(t):
    out = []
    for k in ("fabric_step", "net_step_ll", "net_step_simple", "net_floor_simple"):
        if k in t:
            out.append('%s = "%.1f us";' % (k, t[k] * 1e6))
    out.append('ll_net_bandwidth = "%.2f GB/s";' % (t["ll_net_bandwidth"] / 1e9))
    out.append('factor = %.3f;' % t["factor"])
    return out


def machine_with(t, path):
    """machines/frontier.cfg with its ccl.table figures replaced by t's."""
    src = open(os.path.join(HERE, "..", "machines", "frontier.cfg")).read().splitlines()
    keys = ("fabric_step", "net_step_ll", "net_step_simple", "net_floor_simple", "ll_net_bandwidth", "factor")
    out = []
    for line in src:
        key = line.strip().split(" ")[0]
        if key in keys:
            new = [x for x in table_lines(t) if x.split(" ")[0] == key]
            out += [line[:len(line) - len(line.lstrip())] + x for x in new]
            continue
        out.append(line)
    open(path, "w").write("\n".join(out) + "\n")


def classes(pairs):
    cls = {"1 node": [], "2-8 nodes": [], "16-128 nodes": []}
    within = 0
    for n, meas, pred in pairs:
        k = "1 node" if n == 1 else "2-8 nodes" if n <= 8 else "16-128 nodes"
        cls[k].append(abs(pred - meas) / meas * 100)
        within += 0.5 <= pred / meas <= 2
    for k, v in cls.items():
        print("  %-13s median |error| %5.1f %%  (%d points)" % (k, statistics.median(v) if v else float("nan"), len(v)))
    print("  within 2x: %d of %d (%.1f %%)" % (within, len(pairs), 100.0 * within / max(1, len(pairs))))


def predict(preflight, rows_path, machine=None):
    with tempfile.TemporaryDirectory() as d:
        path = rows_path
        if machine:
            path = os.path.join(d, "rows.csv")
            with open(path, "w") as f:
                for line in open(rows_path):
                    f.write(line.replace("frontier,", machine + ",", 1) if line.startswith("frontier,") else line)
        out = subprocess.run([preflight, "validate", path, "--format", "csv"], capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit("preflight validate failed: " + out.stderr)
    res = list(csv.DictReader(out.stdout.splitlines()))
    return [(int(r["nodes"]), float(r["measured"]), float(r["predicted"])) for r in res]


def cmd_check(preflight, rows_path, machine=None):
    print("frontier RCCL campaign C, %s:" % (machine or "machines/frontier.cfg"))
    classes(predict(preflight, rows_path, machine))


def cmd_loo(preflight, rows_path):
    rows = load(rows_path)
    pairs = []
    with tempfile.TemporaryDirectory() as d:
        for n in sorted(set(x["n"] for x in rows)):
            t = fit(rows, leave=n)
            cfg = os.path.join(d, "loo%d.cfg" % n)
            machine_with(t, cfg)
            part = os.path.join(d, "rows%d.csv" % n)
            with open(part, "w") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(COLS)
                for x in rows:
                    if x["n"] == n:
                        w.writerow([x["r"][c] for c in COLS])
            got = predict(preflight, part, cfg)
            print("left out %3d nodes: %s" % (n, " ".join(table_lines(t))))
            pairs += got
    print("leave-one-node-count-out predictions:")
    classes(pairs)


def main(argv):
    if len(argv) >= 2 and argv[0] == "rows":
        return cmd_rows(argv[1])
    if len(argv) >= 2 and argv[0] == "fit":
        leave = int(argv[3]) if len(argv) >= 4 and argv[2] == "--leave-out" else None
        print("\n".join(table_lines(fit(load(argv[1]), leave))))
        return
    if len(argv) >= 3 and argv[0] == "check":
        return cmd_check(argv[1], argv[2], argv[4] if len(argv) >= 5 and argv[3] == "--machine" else None)
    if len(argv) >= 3 and argv[0] == "loo":
        return cmd_loo(argv[1], argv[2])
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
