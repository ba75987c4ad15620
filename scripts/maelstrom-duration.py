#!/usr/bin/env python3
"""maelstrom-duration.py - give the MAELSTROM energy and power rows what `validate` needs to predict them
with the time held at the measured value (issue 11; docs/validation.md, "Energy with the time held fixed").

For every energy_J / avg_power_W row of scenarios/validation/maelstrom.csv, from the appendix table the row
cites (its `source` column: 001_...txt:LINE (Table T col C)) in the seed text:

  duration_s  the table's "Total runtime" cell of the same column: the whole job, which is what GetPower
              (GPU rows, 001:413-417) and the E4 PDU (node rows, 001:411) metered; for the GPU meter, the
              window its mean power was taken over (energy / mean power of the same column) where that is
              longer: the AP2 tables' GPU energy covers 1.02-1.17x their runtime, which leaves out the
              loading of the dataset into RAM (001:756), while the meter ran from the start;
  train_s     its "Training time" cell: the part of the job spent in training iterations (the rest is
              start-up, I/O, evaluation), at most duration_s; in the AP2 tables, whose "Total training time"
              includes model setup and the evaluation (001:756), the epochs' "Training time for epoch";
  eval_iterations  the AP2 tables' "Evaluation time" is a forward pass over the holdout set (001:760),
              3.8 MB of tweets against the training set's 12 MB (001:746): 3.8/12 of the training
              samples, in passes of the row's global batch;
  iterations  the training steps in that job: epochs x steps per epoch, with epochs = round(total training
              time / epoch time) and steps per epoch the `iterations` of the column's epoch-time row where
              there is one (AP1 tables 6-11, AP5 table 39: 89208 / (32 x GPUs) for AP1); for AP2 (the tables with an
              evaluation time) the report's 148k training samples over the global batch, 32 a GPU (001:746):
              its epoch time over its per-batch time counts 6336-9144 steps for the same one-GPU epoch on
              different machines, the timer leaving part of each step out (docs/validation.md); else epoch
              time / batch time (rounded; AP5);
  scope       gpu_job stays unless the table shows that GPU sensors of the whole node were summed: a column
              that uses one package (one GPU, or one MI250 = 2 GCDs) yet reports a maximum aggregate power
              above its maximum single-device power (AP5 tables 35-37: 1 MPI task, 402 W "aggregate" on one
              A100 whose own maximum is 364 W).  Such tables become node_gpus_job (every device of the node,
              unused ones idle).  node_job (E4 "System avg power", PDU) rows are kept.  On the MI250 the other
              tables become package_job: rocm-smi, which GetPower reads there, reports one power per OAM (both
              GCDs, a second one idle or not; docs/energy.md "Scopes"), not per GCD.

Nothing else in the file changes, so the script can be re-run on any version of the file (e.g. after the
`model` column moved to built-in workloads): it matches rows by their source cell only and rewrites the three
columns (adding duration_s and train_s to the header when absent).  Usage:

  scripts/maelstrom-duration.py [--csv scenarios/validation/maelstrom.csv] [--sources DIR] [--check]

--check exits 1 when the file's rows are not what the script would write (comment lines between rows are not
compared: the writer puts them all on top); --sources defaults to
$PREFLIGHT_SOURCES, else ../shared/sources or ../../shared/sources next to the repository.
"""
import argparse
import csv
import io
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC_RE = re.compile(r"^(?P<file>\S+\.txt):(?P<line>\d+) \(Table (?P<table>\d+) col (?P<col>\d+)\)")

LABELS = {  # row label (lower case, tags stripped) -> key
    "runtime": ("total runtime", "total runtime [s]"),
    "training": ("training time", "total training time", "total training time [s]"),
    "epoch": ("avg. epoch time [s]", "training time for epoch"),
    "batch": ("avg. batch time [s]", "avg. training time per batch"),
    "max_power": ("max power [w]", "max. gpu power [w]", "max. power [w]"),
    "max_aggr": ("max aggregate power [w]", "max. aggr. gpu power [w]", "max. aggregate power [w]"),
    "gpus": ("#gpus",),
    "tasks": ("mpi tasks", "#mpi tasks"),
    "eval": ("evaluation time",),
}
AP2_HOLDOUT = 3.8 / 12  # validation set over training set, by size (001:746)
AP2_SAMPLES = 148000  # AP2's training samples an epoch, "148k" (001:746), batch 32 per GPU


def sources_dir(arg):
    for d in (arg, os.environ.get("PREFLIGHT_SOURCES"), os.path.join(ROOT, "..", "shared", "sources"),
              os.path.join(ROOT, "..", "..", "shared", "sources")):
        if d and os.path.isdir(d):
            return d
    sys.exit("maelstrom-duration.py: the seed texts are not found; give --sources DIR")


def table_block(lines, line_no, table):
    """The lines of Table `table` around line_no (1-based): up to its caption, back to the previous caption."""
    cap = re.compile(r"^\W*Table %s:" % table)
    end = next(i for i in range(line_no - 1, min(len(lines), line_no + 80)) if cap.match(lines[i]))
    start = line_no - 1
    while start > 0 and not re.match(r"^\W*Table \d+:", lines[start - 1]) and line_no - start < 80:
        start -= 1
    return lines[start:end]


def parse_table(block):
    rows = {}
    for ln in block:
        cells = ln.rstrip("\n").split("\t")
        if len(cells) < 2:
            continue
        label = re.sub(r"<[^>]+>|\*", "", cells[0]).strip().lower()
        for key, names in LABELS.items():
            if label in names and key not in rows:
                rows[key] = [re.sub(r"<[^>]+>", "", c).strip() for c in cells[1:]]
    return rows


def num(rows, key, col):
    try:
        return float(rows[key][col - 1].replace(",", ""))
    except (KeyError, IndexError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", default=os.path.join(ROOT, "scenarios", "validation", "maelstrom.csv"))
    ap.add_argument("--sources")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    sdir = sources_dir(a.sources)
    text = open(a.csv, newline="").read()
    head = [l for l in text.splitlines(True) if l.startswith("#")]
    # the file's own account of the energy rows (a comment, not a row)
    head = "".join(head).replace(
        "energy and power rows were measured over whole jobs (GPU) or whole nodes (E4 PDU) and are\n"
        "# listed as not predicted until the energy model covers those scopes.",
        "energy and power rows were measured over whole jobs (GPU) or whole nodes (E4 PDU); their\n"
        "# duration_s, iterations and scope come from scripts/maelstrom-duration.py (energy with time held fixed).")
    body = "".join(l for l in text.splitlines(True) if not l.startswith("#"))
    rd = csv.DictReader(io.StringIO(body))
    fields = list(rd.fieldnames)
    for col in ("duration_s", "train_s", "eval_iterations"):
        if col not in fields:
            fields.append(col)
    rows = list(rd)
    cache = {}

    def table_of(src):
        m = SRC_RE.match(src)
        if not m:
            return None, None
        key = (m["file"], m["table"])
        if key not in cache:
            lines = open(os.path.join(sdir, m["file"]), encoding="utf-8").readlines()
            cache[key] = parse_table(table_block(lines, int(m["line"]), m["table"]))
        return cache[key], int(m["col"])

    # steps per epoch of each time row (AP1, AP5 A2 tables have no batch time), by table and column
    epoch_steps = {}
    for r in rows:
        m = SRC_RE.match(r["source"])
        if m and r["metric"] == "time_s" and r["iterations"]:
            epoch_steps[(m["table"], int(m["col"]))] = float(r["iterations"])
    # tables whose GPU sensors covered the whole node (see the docstring)
    node_wide = set()
    for r in rows:
        m = SRC_RE.match(r["source"])
        if not m or r["metric"] not in ("energy_J", "avg_power_W") or r["scope"] not in ("gpu_job", "node_gpus_job", "package_job"):
            continue
        t, col = table_of(r["source"])
        dies = 2 if "mi250" in r["machine"] else 1
        used = int(r["gpus"] or 0)
        mp, ma = num(t, "max_power", col), num(t, "max_aggr", col)
        if used and used <= dies and mp and ma and ma > 1.05 * mp:
            node_wide.add(m["table"])
    # the GPU meter's window in each column: its energy over its mean power
    WH = {"J": 1.0, "kJ": 1e3, "MJ": 1e6, "Wh": 3600.0, "kWh": 3.6e6}
    meter = {}
    for r in rows:
        m = SRC_RE.match(r["source"])
        if m and r["scope"] in ("gpu_job", "node_gpus_job", "package_job") and r["metric"] in ("energy_J", "avg_power_W"):
            meter.setdefault((m["table"], int(m["col"])), {})[r["metric"]] = float(r["value"]) * (
                WH[r["unit"]] if r["metric"] == "energy_J" else 1.0)
    changed = 0
    for r in rows:
        if r["metric"] not in ("energy_J", "avg_power_W"):
            continue
        m = SRC_RE.match(r["source"])
        t, col = table_of(r["source"])
        if t is None:
            continue
        old = (r.get("duration_s", ""), r.get("train_s", ""), r["iterations"], r["scope"], r.get("eval_iterations", ""))
        run, train, ep, b = num(t, "runtime", col), num(t, "training", col), num(t, "epoch", col), num(t, "batch", col)
        steps = epoch_steps.get((m["table"], col)) or (round(ep / b) if ep and b else None)
        g = num(t, "gpus", col)
        if num(t, "eval", col) and g:  # AP2: the samples over the global batch (DataParallel, 32 a GPU)
            steps = -(-AP2_SAMPLES // (32 * int(g)))
        if run and train and ep and steps:
            epochs = max(1, round(train / ep))
            ep_meter = meter.get((m["table"], col), {})
            if r["scope"] != "node_job" and len(ep_meter) == 2:
                run = max(run, ep_meter["energy_J"] / ep_meter["avg_power_W"])
            r["duration_s"] = "%g" % run
            if num(t, "eval", col):  # AP2: the epochs alone, evaluation priced apart
                r["train_s"] = "%g" % min(epochs * ep, run)
                r["eval_iterations"] = "%d" % round(epochs * steps * AP2_HOLDOUT)
            else:
                r["train_s"] = "%g" % min(train, run)  # at most the metered window
            r["iterations"] = "%d" % (epochs * steps)
        if r["scope"] in ("gpu_job", "package_job") and m["table"] in node_wide:
            r["scope"] = "node_gpus_job"
        elif r["scope"] == "gpu_job" and "mi250" in r["machine"]:
            r["scope"] = "package_job"
        changed += old != (r["duration_s"], r["train_s"], r["iterations"], r["scope"], r.get("eval_iterations", ""))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k) or "" for k in fields})
    new = head + out.getvalue()
    if a.check:  # the data, not where the comment lines between rows sit (the writer puts them all on top)
        data = lambda s: [ln for ln in s.splitlines() if not ln.startswith("#")]
        if data(new) != data(text):
            sys.exit("maelstrom-duration.py: %s is not up to date (%d rows would change)" % (a.csv, changed))
        return
    if new != text:
        tmp = a.csv + ".tmp"
        with open(tmp, "w", newline="") as f:
            f.write(new)
        os.replace(tmp, a.csv)
    print("maelstrom-duration.py: %d rows changed; tables with node-wide GPU sensors: %s" %
          (changed, ", ".join(sorted(node_wide, key=int)) or "none"), file=sys.stderr)


if __name__ == "__main__":
    main()
