#!/usr/bin/env bash
# examples.sh - every example shown to users runs and exits 0 (issue 13 item 6): those of
# `preflight --help` and `preflight CMD --help`, and the commands in the fenced code blocks
# of README.md (the tour included) and docs/*.md (tests/examples/extract.py says which).
# An example marked "# your ..." needs the user's own file: it runs with the shipped sample of
# that name from scenarios/examples/ in its folder (and only then: an unmarked example that
# needs one fails).  --help examples name the samples themselves (@DATA@/scenarios/examples/...).  One marked "# needs a GPU" runs with a stand-in back-end
# (tests/fixtures/fake-backend/).  Identical examples run once.  About 15 s of CPU: the
# sanitizer run skips it (the bad-input corpus and the other tests cover those paths there).
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
python3 "$PF_SRC/tests/examples/extract.py" "$PREFLIGHT" "$PF_SRC" > "$T/examples.tsv" || { bad "extract"; finish; }
exec python3 - "$PREFLIGHT" "$PF_SRC" "$T" <<'PY'
import os, shutil, subprocess, sys, time
binary, src, tmp = sys.argv[1:4]
fixtures = os.path.join(src, "scenarios", "examples")
work = os.path.join(tmp, "work")
os.makedirs(work)
for name in ("scenarios", "machines", "tests"):           # what the examples name, as in a checkout
    os.symlink(os.path.join(src, name), os.path.join(work, name))
env = dict(os.environ, PREFLIGHT_PROGRESS="0")
done, fails, n = set(), [], 0
t0 = time.time()
for line in open(os.path.join(tmp, "examples.tsv")):
    origin, mark, cmd = line.rstrip("\n").split("\t")
    if (mark, cmd) in done:
        continue
    done.add((mark, cmd))
    for f in os.listdir(fixtures):                         # a user's files only where the example says so
        p = os.path.join(work, f)
        if mark == "user":
            shutil.copy(os.path.join(fixtures, f), p)
        elif os.path.exists(p):
            os.remove(p)
    e = dict(env)
    if mark == "gpu":
        e["PREFLIGHT_CAL_DIR"] = os.path.join(src, "tests", "fixtures", "fake-backend")
    shell = '"$PREFLIGHT_BIN"' + cmd[len("preflight"):]
    e["PREFLIGHT_BIN"] = binary
    r = subprocess.run(["bash", "-c", shell], cwd=work, env=e, capture_output=True, text=True, timeout=300)
    n += 1
    if r.returncode != 0:
        fails.append(f"{origin}: exit {r.returncode}: {cmd}\n    {r.stderr.strip()[:400]}")
for f in fails:
    print("FAIL:", f, file=sys.stderr)
print(f"{n} examples run in {time.time() - t0:.1f} s; {len(fails)} failed")
sys.exit(1 if fails else 0)
PY
