#!/usr/bin/env bash
# formats.sh - the table of output formats (model/cli/formats.c): --format names and
# aliases, -o FILE.suffix, the "valid: ..." lists and which commands allow markdown all
# come from its rows, and every document a command writes goes through the renderers.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
export PREFLIGHT_PROGRESS=0
SC="--machine mn5-acc --model gpt3-175b --gpus 1 --tp 1 --pp 1 --gbs 8"

# the valid names, in table order; markdown only where the command writes it
expect_exit 2 $P predict $SC --format xml
expect_grep '^preflight predict: --format "xml": valid: table, json, csv$' "$T/err"
expect_exit 2 $P predict $SC --format md
expect_grep '^preflight predict: --format "md": valid: table, json, csv$' "$T/err"
expect_exit 2 $P plan --machine lumi-g --model llama2-7b --tokens 1e9 --format xml
expect_grep '^preflight plan: --format "xml": valid: table, json, csv, markdown, tex$' "$T/err"
expect_exit 2 $P predict $SC --format tex
expect_grep '^preflight predict: --format "tex": valid: table, json, csv$' "$T/err"

# each name writes its format (models: the cheapest document)
expect_exit 0 $P models --format table
expect_grep '^id +name +params +active +FLOPs/sample$' "$T/out"
expect_exit 0 $P models --format csv
expect_grep '^id,name,params,active_params,flops_per_sample$' "$T/out"
expect_exit 0 $P models --format json
[ "$(json_get "$T/out" '["schema_version"] > 0')" = True ] && ok || bad "models --format json"

# -o FILE.suffix implies the format: .json, .csv, and .md where markdown is valid
$P models -o "$T/m.json" && [ "$(json_get "$T/m.json" '["models"][0]["id"] != ""')" = True ] && ok || bad "-o .json"
$P models -o "$T/m.csv" && expect_grep '^id,name,params' "$T/m.csv"
# -o's suffix is checked against --format (issue 24; docs/exit-codes.md, "Output formats and -o"): a suffix of another format, or of
# a format the command does not write, is refused before any work; an unknown suffix needs --format
expect_exit 2 $P models -o "$T/m.md"   # no markdown for models
expect_grep "^preflight models: -o $T/m.md: \`preflight models\` does not write markdown; valid: table, json \(.json\), csv \(.csv\)$" "$T/err"
[ ! -e "$T/m.md" ] && ok || bad "-o m.md written"
expect_exit 2 $P models --format csv -o "$T/x.json"
expect_grep 'the suffix .json says json but --format says csv' "$T/err"
expect_exit 2 $P models -o "$T/out.xlsx"
expect_grep 'preflight does not write .xlsx files; .* give --format F to write one of them under this name' "$T/err"
[ ! -e "$T/out.xlsx" ] && ok || bad "-o out.xlsx written"
$P models --format csv -o "$T/m.dat" && expect_grep '^id,name' "$T/m.dat"   # --format given: any name
$P models -o "$T/m.txt" && expect_grep '^id +name' "$T/m.txt"               # .txt, .out, .log: the table
$P models --format json -o "$T/m.log" && [ "$(json_get "$T/m.log" '["models"][0]["id"] != ""')" = True ] && ok || bad "--format json -o .log"
$P machines new my-cluster --like mn5-acc -o "$T/my-cluster.cfg" && expect_grep 'nodes' "$T/my-cluster.cfg"  # its own file

# --format on every command that prints data: machines show writes CSV (the JSON document's fields as rows)
expect_exit 0 $P machines show lumi-g --format csv
expect_grep '^field,value$' "$T/out"
expect_grep '^device_spec.peak_TFLOPS.bf16,191.5$' "$T/out"
expect_grep '^site,"CSC, Kajaani, Finland"$' "$T/out"
# calibrate writes JSON only: --format json is taken, another is refused with the list
expect_exit 2 $P calibrate --backend cpu --format csv
expect_grep 'valid: json|one of json' "$T/err"
expect_exit 2 $P calibrate --collectives --format csv
expect_grep 'valid for `preflight calibrate`: json' "$T/err"
expect_exit 0 $P plan --machine leonardo-booster --model llama2-7b --tokens 3e10 --nodes 4 --tp 2 \
  --dist-opt --recompute selective -o "$T/p.md"
expect_grep '^## Compute resources' "$T/p.md"
expect_exit 0 $P plan --machine leonardo-booster --model llama2-7b --tokens 3e10 --nodes 4 --tp 2 \
  --dist-opt --recompute selective --format md
expect_grep '^## Compute resources' "$T/out"

# errors follow the format: JSON on stderr when -o names a .json file
expect_exit 2 $P predict --machine no-such --model gpt3-175b --nodes 1 -o "$T/e.json"
[ "$(json_get "$T/err" '["error"]["code"]')" = ENOENT ] && ok || bad "-o .json: error not JSON"
finish
