#!/usr/bin/env python3
"""Point the MAELSTROM validation rows at the built-in layer-list workloads and tag
each time row by what the report says bounds it.  Re-runnable (idempotent); changes
field values only, never adds or removes columns, keeps comments and every other
column (e.g. a duration_s column added by another script) as they are.

  scripts/maelstrom-models.py [scenarios/validation/maelstrom.csv]

model: every row of an application (time, energy and power rows alike) gets the
built-in id, recognised from the row's notes/tag (AP1 / AP2 / AP5).
tag (time rows; energy/power rows keep the tag of their application's bound too):
  io          AP1 (the report measures its runs in GB/s read: epoch time is set by
              reading the 329.83 GB training set, 001:586-600, Tables 6-11);
              AP5 on several GPUs (I/O bottlenecks of data-distributed training,
              001:1303-1305)
  regression  AP5 on the H100 (CUDA-driver update, epochs about 3x slower, 001:1316)
  compute     everything else (AP2: "training time is dominated by actual training
              tasks", 001:763; AP5 on one GPU: "nearly optimal", 001:1303)
"""
import csv, io, sys

MODELS = {"ap1": "maelstrom-ap1-unet", "ap2": "maelstrom-ap2-deberta-v3-small", "ap5": "maelstrom-ap5-wgan"}
IDS = {v: k for k, v in MODELS.items()}


def app_of(row):
    if row.get("model") in IDS:
        return IDS[row["model"]]
    for key in ("tag", "notes"):
        v = (row.get(key) or "").lower()
        for app in MODELS:
            if v.startswith(app) or app + " " in v or app + "_" in v:
                return app
    return None


def bound_of(app, row):
    gpus = int(row.get("gpus") or 1)
    if app == "ap1":
        return "io"
    if app == "ap5" and row["machine"].startswith("jureca-dc-h100"):
        return "regression"
    if app == "ap5" and gpus > 1:
        return "io"
    return "compute"


OLD_NOTE = ("# The applications are not built-in workloads: params are the stated trainable parameters, flops_per_sample\n",
            "# is estimated from the model description (docs/validation.md, \"MAELSTROM workloads\").  Time rows are\n")
NEW_NOTE = ("# The applications are the built-in layer lists named in the model column (docs/model.md, \"Layer lists\");\n",
            "# tag: what the report says bounds the run (compute, io, regression; docs/validation.md).  Time rows are\n")


def main(path):
    text = open(path, newline="").read()
    lines = text.splitlines(keepends=True)
    comments = [l for l in lines if l.startswith("#")]
    for old, new in zip(OLD_NOTE, NEW_NOTE):  # the header note, once
        comments = [new if l == old else l for l in comments]
    body = "".join(l for l in lines if not l.startswith("#"))
    rows = list(csv.reader(io.StringIO(body)))
    header, data = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    # the notes of energy/power rows do not name the application: take it from the time row above
    last_app = None
    for r in data:
        d = dict(zip(header, r))
        app = app_of(d) or last_app
        if app is None:
            sys.exit(f"{path}: cannot tell the application of row {r[:3]}")
        last_app = app
        r[col["model"]] = MODELS[app]
        # the built-in gives parameters and FLOPs: a row names one workload, not both
        r[col["params"]] = r[col["flops_per_sample"]] = ""
        r[col["tag"]] = bound_of(app, d)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(data)
    with open(path, "w", newline="") as f:
        f.write("".join(comments) + out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "scenarios/validation/maelstrom.csv")
