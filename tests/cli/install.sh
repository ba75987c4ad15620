#!/usr/bin/env bash
# install.sh - `make install` (cmake --install with DESTDIR, issue 24): the staged tree holds the binary,
# the machine files, the docs, a man page and a bash completion generated from the option tables; the
# installed binary finds its own data from a folder outside the source tree; and every `--help`
# example runs there against it, as a user pastes it (`preflight` on PATH), except those marked
# "needs a GPU" in the help text.
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
BUILD=$(dirname "$PREFLIGHT")
[ -f "$BUILD/cmake_install.cmake" ] || { echo "no CMake build folder beside $PREFLIGHT: skipped"; exit 0; }
STAGE=$T/stage
PREFIX=/usr/local
DESTDIR=$STAGE cmake --install "$BUILD" --prefix "$PREFIX" > "$T/install.log" 2>&1 && ok || { bad "cmake --install"; cat "$T/install.log" >&2; finish; }
R=$STAGE$PREFIX
for f in bin/preflight share/preflight/machines/lumi-g.cfg share/preflight/machines/devices share/preflight/scenarios/validation/epicure.csv \
         share/preflight/scenarios/examples/runs.csv share/doc/preflight/README.md share/doc/preflight/exit-codes.md \
         share/man/man1/preflight.1 share/bash-completion/completions/preflight; do
  [ -e "$R/$f" ] && ok || bad "not installed: $f"
done
# the man page and the completion come from the option tables: every option of every command is in both
python3 - "$R/share/man/man1/preflight.1" "$R/share/bash-completion/completions/preflight" "$R/bin/preflight" <<'PY' && ok || bad "man page / completion"
import re, subprocess, sys
man, comp, exe = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
assert man.startswith(".\\\"") and "\n.TH PREFLIGHT 1 " in man
for sec in ("NAME", "SYNOPSIS", "COMMANDS", '"EXIT STATUS"', "ENVIRONMENT", "FILES"):
    assert f"\n.SH {sec}\n" in man, sec
cmds = ["machines", "models", "predict", "sweep", "tune", "compare", "plan", "calibrate", "validate", "collective", "merge"]
for c in cmds:
    help = subprocess.run([exe, c, "--help"], capture_output=True, text=True).stdout
    opts = sorted(set(re.findall(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)", help, re.M)))
    assert opts, c
    line = re.search(rf"^    {c}\) opts='([^']*)'", comp, re.M).group(1).split()
    for o in opts:
        assert o in line, (c, o, "completion")
        assert "\\fB" + o.replace("-", "\\-") + "\\fR" in man, (c, o, "man")
PY
bash -n "$R/share/bash-completion/completions/preflight" && ok || bad "completion: bash syntax"
# from outside the source tree, the installed binary reads its own data (the help names the installed samples)
mkdir -p "$T/elsewhere"
cd "$T/elsewhere"
expect_exit 0 "$R/bin/preflight" machines
expect_grep '^lumi-g ' "$T/out"
expect_exit 0 "$R/bin/preflight" validate --help
expect_grep "$R/share/preflight/scenarios/examples/runs.csv" "$T/out"
grep -q "$PF_SRC" "$T/out" && bad "the installed help names the source tree" || ok
expect_exit 0 "$R/bin/preflight" --version
# every --help example, pasted in a folder of one's own with the installed preflight on PATH
python3 "$PF_SRC/tests/examples/extract.py" "$R/bin/preflight" "$PF_SRC" --help-only > "$T/examples.tsv" || bad "extract"
n=0; skipped=0
while IFS=$'\t' read -r origin mark cmd; do
  if [ "$mark" = gpu ]; then skipped=$((skipped + 1)); continue; fi
  n=$((n + 1))
  if PATH="$R/bin:$PATH" PREFLIGHT_PROGRESS=0 timeout 300 bash -c "$cmd" > "$T/ex.out" 2> "$T/ex.err"; then ok
  else bad "$origin: exit $?: $cmd"; head -3 "$T/ex.err" >&2; fi
done < <(awk -F'\t' '!seen[$3]++' "$T/examples.tsv")   # once each, in the order shown (merge after its shards)
echo "$n --help examples run against the installed binary, $skipped needing a GPU skipped"
[ "$n" -ge 30 ] && ok || bad "only $n examples"
finish
