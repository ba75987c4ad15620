#!/usr/bin/env bash
# docs_generated.sh - pages generated from the repository's own files are current: the device table
# of docs/machine-sources.md is what scripts/device-table.py writes from machines/devices/*.cfg, and
# the check notices a stale table (a copy of the page with one value changed fails it); docs/model.md's
# whole-step kernel list of GPT-2 small is what `preflight kernels` prints (scripts/kernel-list.py), and
# a list with one time changed fails its check; the coverage table of the prediction intervals in
# docs/validation.md is what `validate --coverage` prints, and the energy rows' coverage table in docs/energy.md
# what `validate --energy-coverage` prints.
set -u
. "$(dirname "$0")/lib.bash"
python3 "$PF_SRC/scripts/device-table.py" --check && ok || bad "docs/machine-sources.md device table is stale: run scripts/device-table.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/docs" "$T/scripts" "$T/machines"
cp -r "$PF_SRC/machines/devices" "$T/machines/"
cp "$PF_SRC/scripts/device-table.py" "$T/scripts/"
sed 's/| 400 W \/ 55 W \/ 81 W \/ 140 W |/| 400 W \/ 55 W \/ 82 W \/ 140 W |/' "$PF_SRC/docs/machine-sources.md" > "$T/docs/machine-sources.md"
cmp -s "$T/docs/machine-sources.md" "$PF_SRC/docs/machine-sources.md" && bad "the stale-table fixture did not change the page"
out=$(python3 "$T/scripts/device-table.py" --check 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "machine-sources.md:[0-9]*: the device table differs" <<<"$out" && ok || bad "a stale table passed the check (rc $rc: $out)"
python3 "$T/scripts/device-table.py" && python3 "$T/scripts/device-table.py" --check && ok || bad "regenerating did not make the table current"
python3 "$PF_SRC/scripts/kernel-list.py" "$PREFLIGHT" --check && ok || bad "docs/model.md kernel list is stale: run scripts/kernel-list.py"
mkdir -p "$T/k/docs" "$T/k/scripts"; cp "$PF_SRC/scripts/kernel-list.py" "$T/k/scripts/"; ln -s "$PF_SRC/machines" "$T/k/machines"
sed '/<!-- kernels:begin -->/,/<!-- kernels:end -->/s/| forward | qkv | \([0-9]*\) | [0-9.]* us/| forward | qkv | \1 | 9999.99 us/' \
  "$PF_SRC/docs/model.md" > "$T/k/docs/model.md"
cmp -s "$T/k/docs/model.md" "$PF_SRC/docs/model.md" && bad "the stale-list fixture did not change the page"
out=$(python3 "$T/k/scripts/kernel-list.py" "$PREFLIGHT" --check 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "model.md:[0-9]*: the kernel list differs" <<<"$out" && ok || bad "a stale kernel list passed (rc $rc: $out)"
PF_ROOT="$PF_SRC" PREFLIGHT="$PREFLIGHT" bash "$PF_SRC/scripts/validation-tables.sh" --check-coverage && ok ||
  bad "docs/validation.md or docs/energy.md coverage table is stale: run scripts/validation-tables.sh"
finish
