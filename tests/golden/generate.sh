#!/usr/bin/env bash
# generate.sh BIN OUTDIR - run every case of tests/golden/commands.txt with the preflight binary BIN
# and write OUTDIR/NAME.out for each: the case's stdout, a line "--- stderr", its stderr, and a
# line "--- exit N" with its exit status.  The golden corpus in tests/golden/expected/ is this
# script's output for the commit it was made at; tests/cli/golden.sh regenerates it into a temporary
# directory and compares byte for byte.  Regenerate the corpus with
#     tests/golden/generate.sh build/preflight tests/golden/expected
#
# Cases run one at a time, from the source root (so that relative paths such as scenarios/... and
# tests/fixtures/... work), with stdin from /dev/null, in a fixed environment: PREFLIGHT_MACHINES and
# PREFLIGHT_VALIDATION point at this source tree (never at the tree the binary was built in),
# progress bars are off, the worker count, locale, time zone and fit date are pinned.  Each case is
# killed after 60 s (it then records exit 124).  The outputs are normalised so that only behaviour
# differences remain: the tool's version and git description (taken from `BIN --version`) become
# VERSION and GIT, and the source root's absolute path becomes $SRC.
#
# commands.txt: one case per line, "NAME ARGS...", where NAME is [A-Za-z0-9._-]+ and ARGS are the
# binary's arguments, split as bash words (quotes work; nothing else is expanded).  Blank lines and
# lines starting with '#' are ignored.  OUTDIR's old *.out files are removed first, so that the
# corpus holds exactly the cases of commands.txt.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BIN OUTDIR" >&2
  exit 2
fi
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BIN=$1
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
[ -x "$BIN" ] || { echo "$0: $BIN is not an executable" >&2; exit 2; }
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd -P)
CASES=$SRC/tests/golden/commands.txt

# the pinned environment (everything else inherited is harmless: the binary reads no other variables
# that change its results)
export PREFLIGHT_MACHINES=$SRC/machines
export PREFLIGHT_VALIDATION=$SRC/scenarios/validation
export PREFLIGHT_PROGRESS=0 PREFLIGHT_JOBS=2 PF_FAKE_DATE=2000-01-01T00:00:00Z LC_ALL=C TZ=UTC
unset PREFLIGHT_TIMING PREFLIGHT_CAL_DIR

# what to normalise: "preflight 0.1.0 (8f7fe43a69)"
ver_line=$("$BIN" --version) || { echo "$0: $BIN --version failed" >&2; exit 2; }
VERSION=$(sed -n 's/^preflight \([^ ]*\) (\(.*\))$/\1/p' <<<"$ver_line")
GIT=$(sed -n 's/^preflight \([^ ]*\) (\(.*\))$/\2/p' <<<"$ver_line")
[ -n "$VERSION" ] && [ -n "$GIT" ] || { echo "$0: cannot read the version from \"$ver_line\"" >&2; exit 2; }
re() { printf '%s' "$1" | sed 's/[][\.*^$/|]/\\&/g'; } # a literal string as a sed regex
V=$(re "$VERSION"); G=$(re "$GIT"); S=$(re "$SRC")
norm=(
  -e "s|\(\"version\":[[:space:]]*\"\)$V\"|\1VERSION\"|g"
  -e "s|\(\"git\":[[:space:]]*\"\)$G\"|\1GIT\"|g"
  -e "s|preflight $V ($G)|preflight VERSION (GIT)|g"
  -e "s|preflight $V\([^0-9A-Za-z]\)|preflight VERSION\1|g"
  -e "s|preflight $V\$|preflight VERSION|g"
  -e "s|$S|\$SRC|g"
)
# a git description long enough not to be a word (not "unknown") is replaced wherever it appears
if [ ${#GIT} -ge 7 ] && [ "$GIT" != unknown ]; then norm+=(-e "s|$G|GIT|g"); fi

rm -f "$OUT"/*.out
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
declare -A seen=()
n=0 lineno=0 status=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
  read -r name rest <<<"$line"
  if ! [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || [ -n "${seen[$name]:-}" ]; then
    echo "$CASES:$lineno: bad or repeated case name \"$name\"" >&2
    status=2
    continue
  fi
  seen[$name]=1
  # split ARGS as bash words: quotes are honoured, but any $, `, (, ), ;, &, |, <, > is refused so that
  # eval below can only ever build a word list
  if [[ $rest =~ [\$\`\(\)\;\&\|\<\>] ]]; then
    echo "$CASES:$lineno: case $name: shell metacharacters are not allowed in ARGS" >&2
    status=2
    continue
  fi
  eval "args=($rest)"
  (cd "$SRC" && exec timeout 60 "$BIN" "${args[@]}") </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  {
    cat "$tmp/stdout"
    echo "--- stderr"
    cat "$tmp/stderr"
    echo "--- exit $rc"
  } | sed "${norm[@]}" >"$OUT/$name.out"
  n=$((n + 1))
done <"$CASES"
echo "generate.sh: $n cases written to $OUT" >&2
exit $status
