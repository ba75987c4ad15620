#!/usr/bin/env bash
# validate_stream.sh - a validation CSV is streamed row by row (issue 13 item 5): a generated
# 100 MB file validates under an address-space limit of 300 MB (prlimit --as), every row is
# reported, and the summary counts them all.  The sanitizer build reserves terabytes of
# address space for its shadow memory, so there the file is 10 MB and no limit is set.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
export PREFLIGHT_PROGRESS=0
size=100000000; limit="prlimit --as=300000000"
if ldd "$P" 2>/dev/null | grep -q libasan; then size=10000000; limit=""; fi
rows=$(python3 "$PF_SRC/tests/cli/gen_validation_csv.py" "$T/big.csv" $size | cut -d' ' -f1)
[ "$(stat -c %s "$T/big.csv")" -ge $size ] && ok || bad "generated file too small"
expect_exit 0 $limit $P validate "$T/big.csv" --format csv
[ "$(($(wc -l < "$T/out") - 1))" = "$rows" ] && ok || bad "csv: $(wc -l < "$T/out") lines for $rows rows"
expect_exit 0 $limit $P validate "$T/big.csv" --summary-only -o "$T/summary.txt"
expect_grep "\\($rows rows: $rows predicted, 0 not predicted\\)" "$T/summary.txt"
expect_grep "over $rows predicted rows" "$T/summary.txt"
finish
