#!/usr/bin/env python3
"""fit-gddr6.py - the one power coefficient fitted on MAELSTROM rows: GDDR6's energy a byte (docs/energy.md,
"GDDR6").

The A2 (GA107, GDDR6) has no measured operating point.  Its `power.hbm` (W at the datasheet bandwidth) is the
value that leaves the signed mean error of its AP1 GPU energy and power rows (scenarios/validation/maelstrom.csv,
machine e4-a2, model maelstrom-ap1-unet, scope gpu_job: 001 Table 10, use fit) at 0, found by bisection with
every other coefficient as shipped.  The A2's AP2 and AP5 rows are the check: they are printed, never fitted.

The script runs `preflight validate` on a copy of machines/ (PREFLIGHT_MACHINES) with the A2 file's `hbm` set
to each trial value, so it needs a built preflight.  Usage:

  scripts/fit-gddr6.py [--preflight build/preflight] [--check]

--check exits 1 when the shipped value (machines/devices/a2.cfg) is more than 1 W from the fit.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join(ROOT, "scenarios", "validation", "maelstrom.csv")
HBM = re.compile(r'hbm = "([0-9.]+) W";')


def scope_rows():
    """line number -> model of every e4-a2 gpu_job row, numbered as validate numbers them (1-based file lines)."""
    out, hdr = {}, None
    with open(RUNS) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            cells = next(csv.reader([line]))
            if cells[0] == "machine":
                hdr = cells
                continue
            rec = dict(zip(hdr, cells))
            if rec["machine"] == "e4-a2" and rec.get("scope") == "gpu_job":
                out[n] = rec["model"]
    return out


def signed_means(preflight, machines, hbm_W, rows):
    path = os.path.join(machines, "devices", "a2.cfg")
    with open(os.path.join(ROOT, "machines", "devices", "a2.cfg")) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(HBM.sub('hbm = "%.3f W";' % hbm_W, text, count=1))
    env = dict(os.environ, PREFLIGHT_MACHINES=machines)
    res = subprocess.run([preflight, "validate", RUNS, "--format", "json"], env=env, capture_output=True, text=True)
    if res.returncode not in (0, 1):
        sys.exit("fit-gddr6.py: preflight validate failed: " + res.stderr.strip())
    errs = {}
    for r in json.loads(res.stdout)["rows"]:
        if r["line"] in rows and r.get("status") == "predicted":
            errs.setdefault(rows[r["line"]], []).append(r["error_pct"])
    return {m: sum(v) / len(v) for m, v in errs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preflight", default=os.path.join(ROOT, "build", "preflight"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    rows = scope_rows()
    fitted = "maelstrom-ap1-unet"
    with tempfile.TemporaryDirectory() as tmp:
        machines = os.path.join(tmp, "machines")
        shutil.copytree(os.path.join(ROOT, "machines"), machines)
        lo, hi = 0.0, 200.0  # W: the error rises with hbm, so bisect on its sign
        for _ in range(24):
            mid = 0.5 * (lo + hi)
            if signed_means(a.preflight, machines, mid, rows)[fitted] < 0:
                lo = mid
            else:
                hi = mid
        fit = 0.5 * (lo + hi)
        if fit > 199.0:
            sys.exit("fit-gddr6.py: no hbm up to 200 W brings the A2's AP1 rows to a signed mean of 0")
        means = signed_means(a.preflight, machines, fit, rows)
    with open(os.path.join(ROOT, "machines", "devices", "a2.cfg")) as f:
        shipped = float(HBM.search(f.read()).group(1))
    print("fitted on %s (e4-a2, gpu_job): hbm %.2f W = %.0f pJ/B at 200 GB/s (shipped %.1f W)"
          % (fitted, fit, fit / 200e9 * 1e12, shipped))
    for m in sorted(means):
        print("  %-32s signed mean %+6.1f %%%s" % (m, means[m], "  (fitted)" if m == fitted else "  (check)"))
    if a.check and abs(shipped - fit) > 1.0:
        print("fit-gddr6.py: machines/devices/a2.cfg has hbm %.1f W, the fit gives %.2f W" % (shipped, fit),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
