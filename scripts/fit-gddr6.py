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

--check exits 1 when a GDDR6 file's shipped `hbm` is off the fitted energy a byte by more than 1 W at the A2's
bandwidth (5 pJ/B): the A2's own and the A40's, which carries the figure per byte (GDDR6_DEVICES).
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
BW = re.compile(r'memory_bw = "([0-9.]+) GB/s";')
GDDR6_DEVICES = ("a2", "a40")  # the device files whose `hbm` is the fitted energy a byte x their bandwidth


def device_power(name):
    """(hbm W, memory bandwidth B/s) as machines/devices/NAME.cfg ships them."""
    with open(os.path.join(ROOT, "machines", "devices", name + ".cfg")) as f:
        text = f.read()
    return float(HBM.search(text).group(1)), float(BW.search(text).group(1)) * 1e9


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
    a2_W, a2_bw = device_power("a2")
    per_byte = fit / a2_bw
    print("fitted on %s (e4-a2, gpu_job): hbm %.2f W = %.0f pJ/B at %.0f GB/s (shipped %.1f W)"
          % (fitted, fit, per_byte * 1e12, a2_bw / 1e9, a2_W))
    for m in sorted(means):
        print("  %-32s signed mean %+6.1f %%%s" % (m, means[m], "  (fitted)" if m == fitted else "  (check)"))
    bad = 0
    for name in GDDR6_DEVICES:
        hbm_W, bw = device_power(name)
        if a.check and abs(hbm_W / bw - per_byte) * a2_bw > 1.0:
            print("fit-gddr6.py: machines/devices/%s.cfg has hbm %.1f W, the fit gives %.1f W (%.0f pJ/B x %.0f GB/s)"
                  % (name, hbm_W, per_byte * bw, per_byte * 1e12, bw / 1e9), file=sys.stderr)
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
