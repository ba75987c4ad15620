#!/usr/bin/env python3
"""energy-band.py - the power interval of docs/energy.md ("Ranges") from the time-held energy rows.

Runs `preflight validate scenarios/validation/maelstrom.csv --format csv` (default --hold-time job), takes the
judged energy and power rows (not tagged regression), and prints the 10th and 90th percentiles of measured /
predicted (a nominal 80 % interval; rows of use = check left out) and its leave-one-group-out coverage: for each
machine x application group, the interval from the other groups' rows, and the share of the group's rows inside
it (the check rows judged too).

  scripts/energy-band.py PREFLIGHT [--csv FILE] [--check]

--check compares the percentiles with pf_energy_power_band in model/power/energy.c and exits 1 when they differ
by more than 0.02 (the model changed: update the constants and docs/energy.md).
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def quantile(v, p):
    v = sorted(v)
    x = p * (len(v) - 1)
    i = int(x)
    if i + 1 >= len(v):
        return v[-1]
    return v[i] + (v[i + 1] - v[i]) * (x - i)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("preflight")
    ap.add_argument("--csv", default=os.path.join(ROOT, "scenarios/validation/maelstrom.csv"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    out = subprocess.run([a.preflight, "validate", a.csv, "--format", "csv"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit("energy-band.py: validate failed: " + out.stderr.strip())
    rows = [r for r in csv.DictReader(io.StringIO(out.stdout))
            if r["metric"] in ("energy_J", "avg_power_W") and r["status"] == "predicted" and "regression" not in r["tag"]]
    # (group, measured / predicted, held out): rows of use = check (the GH200's) never set the band, they are
    # only judged by it
    data = [(r["machine"] + " " + r["model"], 1.0 / (1.0 + float(r["error_pct"]) / 100.0), r["use"] == "check")
            for r in rows]
    if not data:
        sys.exit("energy-band.py: no judged energy rows in " + a.csv)
    covered = 0
    for g in sorted({g for g, _, _ in data}):
        others = [m for h, m, held in data if h != g and not held]
        lo, hi = quantile(others, 0.1), quantile(others, 0.9)
        mine = [m for h, m, _ in data if h == g]
        c = sum(lo <= m <= hi for m in mine)
        covered += c
        print("%-45s [%.3f, %.3f]  %d of %d rows inside" % (g, lo, hi, c, len(mine)))
    fit = [m for _, m, held in data if not held]
    lo, hi = quantile(fit, 0.1), quantile(fit, 0.9)
    print("power band (measured / predicted, 10th-90th percentile): [%.3f, %.3f] over %d rows (%d check rows "
          "left out)" % (lo, hi, len(fit), len(data) - len(fit)))
    print("leave-one-group-out coverage: %.1f %% of %d rows" % (100.0 * covered / len(data), len(data)))
    if a.check:
        src = open(os.path.join(ROOT, "model/power/energy.c")).read()
        m = re.search(r"pf_energy_power_band\[2\] = \{([\d.]+), ([\d.]+)\}", src)
        if not m:
            sys.exit("energy-band.py: pf_energy_power_band not found in model/power/energy.c")
        if abs(float(m.group(1)) - lo) > 0.02 or abs(float(m.group(2)) - hi) > 0.02:
            sys.exit("energy-band.py: model/power/energy.c has [%s, %s], the rows give [%.3f, %.3f]"
                     % (m.group(1), m.group(2), lo, hi))


if __name__ == "__main__":
    main()
